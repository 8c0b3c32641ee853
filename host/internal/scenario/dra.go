package scenario

import (
	"context"

	resourceapi "k8s.io/api/resource/v1"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/dra"
)

func claimName(c *abi.Claim) string { return c.Namespace + "/" + c.Name }

// runClaim allocates a claim; unless the call fails or its answer is out of
// bounds, the claim is prepared and reported with its CDI edits and status.
func (r *Runner) runClaim(ctx context.Context, claim *abi.Claim) {
	r.step.Target = claimName(claim)
	call := "Allocate " + claimName(claim)
	resp, err := r.client.Allocate(ctx, &abi.AllocateRequest{Claim: claim})
	if !r.called(call, err) {
		return
	}
	if err := preparedShape(resp, claim); err != nil {
		r.fail(call, err)
		return
	}
	if !r.applyUpdates(call, resp.GetUpdates(), "") {
		return
	}
	r.node.claims = append(r.node.claims, &abi.PreparedClaim{Claim: claim, Allocation: resp})
	report := &ClaimReport{UID: claim.Uid, Devices: []PreparedReport{}}
	for _, d := range resp.GetDevices() {
		report.Devices = append(report.Devices, PreparedReport{
			Request: d.Request, Pool: d.Pool, Device: d.Device, ShareID: d.ShareId,
			ContainerEdits: protoValue(d.ContainerEdits), Status: statusValue(d.Status),
		})
	}
	r.step.Claim = report
}

// runRelease releases a prepared claim; a refused Release leaves it prepared,
// as kubelet retries unpreparing.
func (r *Runner) runRelease(ctx context.Context, key string) {
	r.step.Target = key
	i := r.node.claim(key)
	if i < 0 {
		r.fail("Release "+key, &skipped{what: "claim " + key})
		return
	}
	call := "Release " + key
	resp, err := r.client.Release(ctx, &abi.ReleaseRequest{Claim: r.node.claims[i].Claim})
	if r.called(call, err) && r.applyUpdates(call, resp.GetUpdates(), "") {
		r.node.claims = append(r.node.claims[:i], r.node.claims[i+1:]...)
	}
}

// runReconfigure sends a new configuration; a refused one leaves the old in
// force (and in the Init of any rebuilt instance).
func (r *Runner) runReconfigure(ctx context.Context, config []byte) {
	call := "Reconfigure"
	resp, err := r.client.Reconfigure(ctx, &abi.ReconfigureRequest{Config: config})
	if r.called(call, err) && r.applyUpdates(call, resp.GetUpdates(), "") {
		r.config = config
		wants := resp.GetWantsDra()
		r.step.WantsDRA = &wants
	}
}

// runDevices asks what the node would publish.
func (r *Runner) runDevices(ctx context.Context) {
	call := "Devices"
	resp, err := r.client.Devices(ctx, &abi.DevicesRequest{})
	if !r.called(call, err) {
		return
	}
	if err := devicesShape(resp); err != nil {
		r.fail(call, err)
		return
	}
	slices, err := r.resourceSlices(resp)
	if err != nil {
		r.fail(call, &shapeError{Field: "devices", Message: err.Error()})
		return
	}
	r.step.Devices = slices
}

// resourceSlices are the ResourceSlices the agent would publish for resp, as
// resource.k8s.io/v1 writes them (what `kubectl get resourceslices -o yaml`
// shows under spec): the devices split as host/dra splits them, in one pool
// named after the node, of its first generation.
func (r *Runner) resourceSlices(resp *abi.DevicesResponse) ([]resourceapi.ResourceSliceSpec, error) {
	res, err := dra.DriverResources(NodeName, resp)
	if err != nil {
		return nil, err
	}
	pool := res.Pools[NodeName]
	node := NodeName
	out := make([]resourceapi.ResourceSliceSpec, 0, len(pool.Slices))
	for _, s := range pool.Slices {
		out = append(out, resourceapi.ResourceSliceSpec{
			Driver:         r.driver,
			Pool:           resourceapi.ResourcePool{Name: NodeName, Generation: 1, ResourceSliceCount: int64(len(pool.Slices))},
			NodeName:       &node,
			Devices:        s.Devices,
			SharedCounters: s.SharedCounters,
		})
	}
	return out, nil
}
