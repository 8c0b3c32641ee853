package validate

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Limits of a container adjustment (docs/security.md lists them all).
const (
	// MaxEnv is the most variables one adjustment may set.
	MaxEnv = 256
	// MaxEnvBytes caps the "NAME=value" strings of one adjustment together;
	// Linux refuses any single one over 128 KiB (MAX_ARG_STRLEN) at exec.
	MaxEnvBytes = 128 << 10
	// MaxAnnotationBytes is the Kubernetes API's limit on an object's
	// annotations, keys and values together.
	MaxAnnotationBytes = apivalidation.TotalAnnotationSizeLimitB
	// MaxClassName caps an RDT or block I/O class name.
	MaxClassName = 63
)

// className is what an RDT or block I/O class may be called: the runtime
// turns an RDT class into a resctrl directory, so no path separators, no
// leading dot, nothing but letters, digits, '_', '-' and '.'.
var className = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// Adjustment checks a CreateContainer answer's adjustment; nil passes.
func (l *Limits) Adjustment(a *abi.ContainerAdjustment) error {
	if err := l.CPUSet("adjustment.cpuset_cpus", a.GetCpusetCpus()); err != nil {
		return err
	}
	if err := l.Mems("adjustment.cpuset_mems", a.GetCpusetMems()); err != nil {
		return err
	}
	if err := l.memoryPolicy("adjustment.memory_policy", a.GetMemoryPolicy()); err != nil {
		return err
	}
	if err := Env("adjustment.env", a.GetEnv()); err != nil {
		return err
	}
	if err := Annotations("adjustment.annotations", a.GetAnnotations()); err != nil {
		return err
	}
	if err := Class("adjustment.rdt_class", a.GetRdtClass()); err != nil {
		return err
	}
	return Class("adjustment.blockio_class", a.GetBlockioClass())
}

// memoryPolicy checks a memory policy; nil passes. A mode is required (the
// runtime has no "unspecified" mode), and mode and flags must be ones the ABI
// defines.
func (l *Limits) memoryPolicy(field string, mp *abi.MemoryPolicy) error {
	if mp == nil {
		return nil
	}
	if _, ok := abi.MemoryPolicyMode_name[int32(mp.GetMode())]; !ok || mp.GetMode() == abi.MemoryPolicyMode_MEMORY_POLICY_MODE_UNSPECIFIED {
		return invalid(field+".mode", "%d is not a memory policy mode (1 to %d)", mp.GetMode(), len(abi.MemoryPolicyMode_name)-1)
	}
	for i, f := range mp.GetFlags() {
		if _, ok := abi.MemoryPolicyFlag_name[int32(f)]; !ok || f == abi.MemoryPolicyFlag_MEMORY_POLICY_FLAG_UNSPECIFIED {
			return invalid(fmt.Sprintf("%s.flags[%d]", field, i), "%d is not a memory policy flag (1 to %d)", f, len(abi.MemoryPolicyFlag_name)-1)
		}
	}
	return l.Mems(field+".nodes", mp.GetNodes())
}

// Env checks environment variables: at most MaxEnv, MaxEnvBytes together,
// valid names, values of valid UTF-8 without NUL or newline.
func Env(field string, env []*abi.KeyValue) error {
	if len(env) > MaxEnv {
		return invalid(field, "%d variables, more than the limit of %d", len(env), MaxEnv)
	}
	total := 0
	for i, kv := range env {
		at := fmt.Sprintf("%s[%d]", field, i)
		if !EnvName(kv.GetKey()) {
			return invalid(at+".key", "%q is not a valid variable name", kv.GetKey())
		}
		v := kv.GetValue()
		if !utf8.ValidString(v) || strings.ContainsAny(v, "\x00\n") {
			return invalid(at+".value", "%q holds invalid UTF-8, a NUL or a newline", truncate(v))
		}
		if total += len(kv.GetKey()) + 1 + len(v); total > MaxEnvBytes {
			return invalid(at, "the variables reach %d bytes, more than the limit of %d", total, MaxEnvBytes)
		}
	}
	return nil
}

// Annotations checks annotations as the Kubernetes API server would: keys
// are qualified names, keys and values together at most MaxAnnotationBytes.
func Annotations(path string, annotations map[string]string) error {
	if errs := apivalidation.ValidateAnnotations(annotations, field.NewPath(path)); len(errs) > 0 {
		e := errs[0]
		msg := e.ErrorBody()
		if e.Type == field.ErrorTypeTooLong {
			msg = fmt.Sprintf("annotations exceed the limit of %d bytes (keys and values together)", MaxAnnotationBytes)
		}
		return invalid(e.Field, "%s", msg)
	}
	for k, v := range annotations {
		if !utf8.ValidString(v) {
			return invalid(fmt.Sprintf("%s[%q]", path, k), "value is not valid UTF-8")
		}
	}
	return nil
}

// Class checks an RDT or block I/O class name; "" passes (unchanged).
func Class(field, name string) error {
	if name == "" {
		return nil
	}
	if len(name) > MaxClassName || !className.MatchString(name) {
		return invalid(field, "%q is not a class name (letters, digits, '_', '-', '.', not first, at most %d)", truncate(name), MaxClassName)
	}
	return nil
}

// Updates checks ContainerUpdates, reporting fields as prefix[i].…; live tells
// which container ids exist (an update for any other is refused). A grouped
// update is checked as sent: its values once, then every member of
// also_container_ids, a member that is not live or empty named as
// prefix[i].also_container_ids[j].
func (l *Limits) Updates(prefix string, us []*abi.ContainerUpdate, live func(id string) bool) error {
	for i, u := range us {
		field := fmt.Sprintf("%s[%d]", prefix, i)
		if u == nil {
			return invalid(field, "empty update")
		}
		if !live(u.GetContainerId()) {
			return invalid(field+".container_id", "no live container %q", truncate(u.GetContainerId()))
		}
		if err := l.CPUSet(field+".cpuset_cpus", u.GetCpusetCpus()); err != nil {
			return err
		}
		if err := l.Mems(field+".cpuset_mems", u.GetCpusetMems()); err != nil {
			return err
		}
		if err := Class(field+".rdt_class", u.GetRdtClass()); err != nil {
			return err
		}
		if err := Class(field+".blockio_class", u.GetBlockioClass()); err != nil {
			return err
		}
		for j, id := range u.GetAlsoContainerIds() {
			if id == "" || !live(id) {
				return invalid(fmt.Sprintf("%s.also_container_ids[%d]", field, j), "no live container %q", truncate(id))
			}
		}
	}
	return nil
}

// EnvName reports whether s can name an environment variable: valid UTF-8,
// not empty, no '=', no control characters.
func EnvName(s string) bool {
	return s != "" && utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r == '=' || r < ' ' || r == 0x7f })
}

// truncate shortens s for an error message.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
