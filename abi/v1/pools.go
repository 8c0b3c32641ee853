package v1

import "slices"

// MinorPools is the first ABI minor version with the Pools call. A host sends
// Pools only to a policy that lists Method_METHOD_POOLS in its capabilities,
// so a policy built for an older minor is never asked.
const MinorPools = 2

// Limits of a PoolsResponse: the pool names become metric label values, so
// their number and length are bounded (abi/README.md section 14).
const (
	// MaxPools is the most pools one answer may list.
	MaxPools = 256
	// MaxPoolName is the longest pool name, in bytes.
	MaxPoolName = 128
)

// HasCapability reports whether md lists method m among the calls the policy
// implements.
func (md *PolicyMetadata) HasCapability(m Method) bool {
	return slices.Contains(md.GetCapabilities(), m)
}
