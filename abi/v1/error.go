package v1

import (
	"errors"
	"fmt"
	"strings"
)

// PolicyError is a call the policy refused with an Error response. Nothing of it
// was applied.
type PolicyError struct {
	// Method is the call that was refused; METHOD_UNSPECIFIED inside a policy.
	Method  Method
	Code    ErrorCode
	Field   string
	Message string
}

// Errorf returns a PolicyError with the given code, offending field (a dotted path,
// or "") and message.
func Errorf(code ErrorCode, field, format string, args ...any) *PolicyError {
	return &PolicyError{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

func (e *PolicyError) Error() string {
	var b strings.Builder
	if e.Method != Method_METHOD_UNSPECIFIED {
		b.WriteString(e.Method.Short())
		b.WriteString(": ")
	}
	b.WriteString(strings.TrimPrefix(e.Code.String(), "ERROR_CODE_"))
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Message)
	return b.String()
}

// ToProto converts any error into the Error message a policy answers: a
// PolicyError (possibly wrapped) keeps its code and field, anything else is
// ERROR_CODE_INTERNAL.
func ToProto(err error) *Error {
	if pe, ok := errors.AsType[*PolicyError](err); ok {
		return &Error{Code: pe.Code, Field: pe.Field, Message: pe.Message}
	}
	return &Error{Code: ErrorCode_ERROR_CODE_INTERNAL, Message: err.Error()}
}

// Short names a method the way logs and errors do: "CreateContainer".
func (m Method) Short() string {
	name, ok := methodNames[m]
	if !ok {
		return fmt.Sprintf("Method(%d)", int32(m))
	}
	return name
}

var methodNames = map[Method]string{
	Method_METHOD_INFO:               "Info",
	Method_METHOD_INIT:               "Init",
	Method_METHOD_RECONFIGURE:        "Reconfigure",
	Method_METHOD_DEVICES:            "Devices",
	Method_METHOD_ALLOCATE:           "Allocate",
	Method_METHOD_RELEASE:            "Release",
	Method_METHOD_SYNCHRONIZE:        "Synchronize",
	Method_METHOD_RUN_POD_SANDBOX:    "RunPodSandbox",
	Method_METHOD_CREATE_CONTAINER:   "CreateContainer",
	Method_METHOD_UPDATE_CONTAINER:   "UpdateContainer",
	Method_METHOD_STOP_CONTAINER:     "StopContainer",
	Method_METHOD_REMOVE_CONTAINER:   "RemoveContainer",
	Method_METHOD_STOP_POD_SANDBOX:   "StopPodSandbox",
	Method_METHOD_REMOVE_POD_SANDBOX: "RemovePodSandbox",
	Method_METHOD_DUMP_STATE:         "DumpState",
	Method_METHOD_POOLS:              "Pools",
}
