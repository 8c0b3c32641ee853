package balloons

import (
	"errors"

	"github.com/nriwasm/nriwasm/sdk/go/kit/expr"
	"github.com/nriwasm/nriwasm/sdk/go/policyconfig"
)

// checkExpressions validates matchExpressions at the configuration path
// parts, naming the entry and its refused field.
func checkExpressions(list []expr.Expression, parts ...any) error {
	for i := range list {
		if err := list[i].Validate(); err != nil {
			var fe *expr.FieldError
			if errors.As(err, &fe) {
				return policyconfig.Errorf(field(append(parts, i, fe.Field)...), "%v", fe.Err)
			}
			return policyconfig.Errorf(field(append(parts, i)...), "%v", err)
		}
	}
	return nil
}
