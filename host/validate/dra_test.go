package validate_test

import (
	"testing"

	"github.com/nriwasm/nriwasm/host/validate"
	"github.com/nriwasm/nriwasm/host/validate/validatetest"
)

func TestDevicesAgainstTheAPIRules(t *testing.T) {
	for _, c := range validatetest.DeviceCases() {
		t.Run(c.Name, func(t *testing.T) { checkField(t, validate.Devices(c.Devices), c.Field) })
	}
}
