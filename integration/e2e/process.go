//go:build integration && e2e

package e2e

import (
	"errors"
	"fmt"
	"net"
)

// nodeIP is the machine's first non-loopback IPv4 address: the kubelet
// refuses a loopback --node-ip.
func nodeIP() (string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", fmt.Errorf("listing addresses: %w", err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
			return ipn.IP.String(), nil
		}
	}
	return "", errors.New("no non-loopback IPv4 address for the kubelet's --node-ip")
}
