package scenario

import (
	"context"

	abi "github.com/nriwasm/nriwasm/abi/v1"
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
	r.step.Devices = protoValue(resp)
}
