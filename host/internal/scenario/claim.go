package scenario

import (
	"github.com/nriwasm/nriwasm/host/internal/strictjson"

	"bytes"
	"encoding/json"
	"fmt"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"maps"
	"slices"
)

var configSources = map[string]abi.DeviceConfigSource{
	"":      abi.DeviceConfigSource_DEVICE_CONFIG_SOURCE_CLAIM,
	"claim": abi.DeviceConfigSource_DEVICE_CONFIG_SOURCE_CLAIM,
	"class": abi.DeviceConfigSource_DEVICE_CONFIG_SOURCE_CLASS,
}

// parseClaim builds the Claim an Allocate call carries.
func parseClaim(value json.RawMessage, path string, n *liveNames) (*abi.Claim, error) {
	var s claimSpec
	if err := strictjson.Decode(value, &s, path); err != nil {
		return nil, err
	}
	if err := checkName(s.Name, path+".name"); err != nil {
		return nil, err
	}
	if s.Namespace == "" {
		s.Namespace = "default"
	}
	key := s.Namespace + "/" + s.Name
	if n.claims[key] {
		return nil, fmt.Errorf("%s.name: claim %q is already allocated", path, key)
	}
	if s.UID == "" {
		s.UID = derivedUID("claim", s.Namespace, s.Name)
	}
	claim := &abi.Claim{Uid: s.UID, Namespace: s.Namespace, Name: s.Name}
	for i, r := range s.Results {
		rpath := fmt.Sprintf("%s.results[%d]", path, i)
		if r.Request == "" || r.Device == "" {
			return nil, fmt.Errorf("%s: request and device are required", rpath)
		}
		if r.Pool == "" {
			r.Pool = NodeName
		}
		res := &abi.DeviceAllocation{Request: r.Request, Pool: r.Pool, Device: r.Device, ShareId: r.ShareID, AdminAccess: r.AdminAccess}
		for _, name := range slices.Sorted(maps.Keys(r.ConsumedCapacity)) {
			if _, err := parseQuantity(r.ConsumedCapacity[name]); err != nil {
				return nil, fmt.Errorf("%s.consumedCapacity.%s: %w", rpath, name, err)
			}
			if res.ConsumedCapacity == nil {
				res.ConsumedCapacity = map[string]string{}
			}
			res.ConsumedCapacity[name] = string(r.ConsumedCapacity[name])
		}
		claim.Results = append(claim.Results, res)
	}
	for i, c := range s.Config {
		cpath := fmt.Sprintf("%s.config[%d]", path, i)
		source, ok := configSources[c.Source]
		if !ok {
			return nil, fmt.Errorf("%s.source: %q: want claim or class", cpath, c.Source)
		}
		params, err := jsonObject(c.Parameters)
		if err != nil {
			return nil, fmt.Errorf("%s.parameters: %w", cpath, err)
		}
		claim.Config = append(claim.Config, &abi.DeviceConfig{Requests: c.Requests, Source: source, Parameters: params})
	}
	n.claims[key] = true
	return claim, nil
}

// jsonObject returns raw compacted, requiring a JSON object.
func jsonObject(raw json.RawMessage) ([]byte, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("want a JSON object")
	}
	var out bytes.Buffer
	if err := json.Compact(&out, raw); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
