// Package kubelettest is a kubelet stand-in for DRA plugin tests: it talks to
// a plugin over the real gRPC APIs kubelet uses. Register finds the plugin's
// registration socket, calls GetInfo and NotifyRegistrationStatus, and dials
// the endpoint the plugin named; Prepare and Unprepare are kubelet's
// NodePrepareResources and NodeUnprepareResources.
package kubelettest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// Plugin is a registered DRA plugin as kubelet sees it.
type Plugin struct {
	Info   *registerapi.PluginInfo
	conn   *grpc.ClientConn
	client drapb.DRAPluginClient
}

// Register waits (until ctx ends) for a registration socket in registrarDir,
// registers the plugin behind it as kubelet does and dials its DRA endpoint.
func Register(ctx context.Context, registrarDir string) (*Plugin, error) {
	var sock string
	for sock == "" {
		matches, _ := filepath.Glob(filepath.Join(registrarDir, "*.sock"))
		if len(matches) > 0 {
			sock = matches[0]
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no registration socket in %s: %w", registrarDir, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	regConn, err := dial(sock)
	if err != nil {
		return nil, err
	}
	defer regConn.Close()
	reg := registerapi.NewRegistrationClient(regConn)
	info, err := reg.GetInfo(ctx, &registerapi.InfoRequest{})
	if err != nil {
		return nil, fmt.Errorf("GetInfo: %w", err)
	}
	if info.Type != registerapi.DRAPlugin {
		return nil, fmt.Errorf("plugin type %q, want %q", info.Type, registerapi.DRAPlugin)
	}
	if _, err := reg.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: true}); err != nil {
		return nil, fmt.Errorf("NotifyRegistrationStatus: %w", err)
	}
	conn, err := dial(info.Endpoint)
	if err != nil {
		return nil, err
	}
	return &Plugin{Info: info, conn: conn, client: drapb.NewDRAPluginClient(conn)}, nil
}

func dial(path string) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", path, err)
	}
	return conn, nil
}

// Close closes the connection to the plugin.
func (p *Plugin) Close() error { return p.conn.Close() }

// Claim names a claim as kubelet sends it.
type Claim struct{ Namespace, Name, UID string }

func (c Claim) proto() *drapb.Claim {
	return &drapb.Claim{Namespace: c.Namespace, Name: c.Name, Uid: c.UID}
}

// Prepare calls NodePrepareResources for claims and returns the per-claim
// answers, or the error of the call or of the first claim that failed.
func (p *Plugin) Prepare(ctx context.Context, claims ...Claim) (map[string]*drapb.NodePrepareResourceResponse, error) {
	req := &drapb.NodePrepareResourcesRequest{}
	for _, c := range claims {
		req.Claims = append(req.Claims, c.proto())
	}
	resp, err := p.client.NodePrepareResources(ctx, req)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, c := range claims {
		r, ok := resp.Claims[c.UID]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("claim %s: no answer", c.UID))
		case r.Error != "":
			errs = append(errs, fmt.Errorf("claim %s: %s", c.UID, r.Error))
		}
	}
	return resp.Claims, errors.Join(errs...)
}

// Unprepare calls NodeUnprepareResources for claims.
func (p *Plugin) Unprepare(ctx context.Context, claims ...Claim) error {
	req := &drapb.NodeUnprepareResourcesRequest{}
	for _, c := range claims {
		req.Claims = append(req.Claims, c.proto())
	}
	resp, err := p.client.NodeUnprepareResources(ctx, req)
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range claims {
		if r, ok := resp.Claims[c.UID]; !ok || r.Error != "" {
			errs = append(errs, fmt.Errorf("claim %s: unprepare: %v", c.UID, r.GetError()))
		}
	}
	return errors.Join(errs...)
}
