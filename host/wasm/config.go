package wasm

import (
	"bytes"
	"context"
	"fmt"

	"sigs.k8s.io/yaml"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// configField is the field a configuration that is neither YAML nor JSON is
// refused at, as a policy decoding it itself would name it.
const configField = "config"

// configFormat is the form in which the policy wants its configuration:
// PolicyMetadata.config_format of the sealed metadata, or, for a module that
// is unsealed or being resealed, of the first instance's Info answer, asked
// before the first Init or Reconfigure. Called with p.mu held or before p is
// shared.
func (p *Policy) configFormat(ctx context.Context, in *instance) (abi.ConfigFormat, error) {
	if p.format != nil {
		return *p.format, nil
	}
	resp, err := in.do(ctx, abi.Method_METHOD_INFO, &abi.InfoRequest{HostAbiMinor: abi.ABIMinor})
	if err != nil {
		return 0, err
	}
	if e := resp.GetError(); e != nil {
		return 0, fmt.Errorf("policy %q: Info (for its config_format): %s", p.name, e.GetMessage())
	}
	f := resp.GetInfo().GetMetadata().GetConfigFormat()
	p.format = &f
	return f, nil
}

// withConfigFormat returns req with its configuration in the form the policy
// wants: for CONFIG_FORMAT_JSON an Init or Reconfigure request carries it
// converted from YAML (a copy of req; req is left alone). A configuration that
// is neither YAML nor JSON is answered here, as the policy's own
// INVALID_ARGUMENT at field "config", and never reaches the policy. Other
// requests, blank configurations and other formats pass unchanged.
func (p *Policy) withConfigFormat(ctx context.Context, in *instance, req abi.Message) (abi.Message, *abi.Response, error) {
	var config []byte
	switch r := req.(type) {
	case *abi.InitRequest:
		config = r.GetConfig()
	case *abi.ReconfigureRequest:
		config = r.GetConfig()
	default:
		return req, nil, nil
	}
	if len(bytes.TrimSpace(config)) == 0 {
		return req, nil, nil
	}
	format, err := p.configFormat(ctx, in)
	if err != nil || format != abi.ConfigFormat_CONFIG_FORMAT_JSON {
		return req, nil, err
	}
	js, err := yaml.YAMLToJSON(config)
	if err != nil {
		return nil, &abi.Response{Result: &abi.Response_Error{Error: &abi.Error{
			Code:    abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT,
			Field:   configField,
			Message: fmt.Sprintf("not YAML or JSON: %v", err),
		}}}, nil
	}
	return withConfig(req, js), nil, nil
}

// withConfig is a copy of an Init or Reconfigure request with config set: the
// other fields are shared, not copied (an Init's restore state may hold a
// thousand containers).
func withConfig(req abi.Message, config []byte) abi.Message {
	switch r := req.(type) {
	case *abi.InitRequest:
		return &abi.InitRequest{
			Config:       config,
			NodeName:     r.NodeName,
			Topology:     r.Topology,
			Restore:      r.Restore,
			DriverName:   r.DriverName,
			HostAbiMinor: r.HostAbiMinor,
			Swap:         r.Swap,
		}
	case *abi.ReconfigureRequest:
		return &abi.ReconfigureRequest{Config: config}
	}
	return req
}
