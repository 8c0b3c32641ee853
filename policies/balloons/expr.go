package balloons

import (
	"errors"

	"github.com/nriwasm/nriwasm/sdk/go/kit/expr"
	"github.com/nriwasm/nriwasm/sdk/go/policyconfig"
)

// checkExpressions adds to errs each invalid entry of matchExpressions at
// the configuration path parts, naming the entry and its refused field.
func checkExpressions(errs *policyconfig.Errors, list []expr.Expression, parts ...any) {
	for i := range list {
		err := list[i].Validate()
		var fe *expr.FieldError
		switch {
		case errors.As(err, &fe):
			errs.Add(field(append(parts, i, fe.Field)...), "%v", fe.Err)
		case err != nil:
			errs.Add(field(append(parts, i)...), "%v", err)
		}
	}
}
