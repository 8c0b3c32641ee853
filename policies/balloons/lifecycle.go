package balloons

import (
	"cmp"
	"slices"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit"
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// podSpec is what a container was created with, kept to place it again on
// Reconfigure: its pod and container as an encoded CreateContainerRequest,
// so the garbage collector has nothing to scan in it (in Wasm it marks on
// the calls' time). A create keeps the bytes of its own request
// (policy.EncodedContainerCreator), which the SDK never reuses: nothing is
// encoded on the hot path.
type podSpec []byte

func encodeSpec(pod *abi.PodSandbox, spec *abi.Container) podSpec {
	b, _ := (&abi.CreateContainerRequest{Pod: pod, Container: spec}).MarshalVT()
	return b
}

// decode gives back the pod and container, empty ones where the request had
// none. Their strings point into ps (UnmarshalVTUnsafe), which is never
// changed: decoding copies nothing, and the module links no copying
// decoder for the container's messages.
func (ps podSpec) decode() (*abi.PodSandbox, *abi.Container, error) {
	r := &abi.CreateContainerRequest{}
	if err := r.UnmarshalVTUnsafe(ps); err != nil {
		return nil, nil, err
	}
	pod, spec := r.GetPod(), r.GetContainer()
	if pod == nil {
		pod = &abi.PodSandbox{}
	}
	if spec == nil {
		spec = &abi.Container{}
	}
	return pod, spec, nil
}

// Init implements policy.Initializer: it parses the configuration, takes
// back every balloon and container of restore, then creates the balloons
// each type keeps at least.
func (p *Policy) Init(r *abi.InitRequest) (*abi.InitResponse, error) {
	cfg, ix, err := kit.Init(r, ParseConfig, newTopoIndex)
	if err != nil {
		return nil, err
	}
	ix.hostMinor = r.GetHostAbiMinor()
	driver := r.GetDriverName()
	if driver == "" {
		driver = defaultDriver
	}
	st, err := newState(cfg, ix, driver)
	if err != nil {
		return nil, err
	}
	if err := st.restore(r.GetRestore(), r.GetSwap()); err != nil {
		return nil, err
	}
	if err := st.createMinBalloons(); err != nil {
		return nil, err
	}
	st.reshare()
	p.st = st
	return &abi.InitResponse{WantsDra: st.wantsDRA()}, nil
}

// adjustment is what c gets at creation.
func (c *container) adjustment() *abi.ContainerAdjustment {
	cpus, mems := c.lists()
	a := &abi.ContainerAdjustment{CpusetCpus: cpus, CpusetMems: mems}
	if c.b != nil {
		a.Annotations = map[string]string{keyAssigned: c.b.name()}
	}
	return a
}

// CreateContainer implements policy.ContainerCreator: a repeat answers what
// the first create was given.
func (p *Policy) CreateContainer(r *abi.CreateContainerRequest) (*abi.CreateContainerResponse, error) {
	return p.CreateContainerEncoded(r, nil)
}

// CreateContainerEncoded implements policy.EncodedContainerCreator: as
// CreateContainer, keeping encoded (r's bytes; nil: r is encoded) as the
// container's spec.
func (p *Policy) CreateContainerEncoded(r *abi.CreateContainerRequest, encoded []byte) (*abi.CreateContainerResponse, error) {
	place := func(pod *abi.PodSandbox, spec *abi.Container) (*container, error) {
		return p.st.create(pod, spec, encoded)
	}
	return containers.Create(r, p.st.ctrs, (*container).adjustment, place, func(c *container) []*abi.ContainerUpdate { return p.st.updates(c.id) })
}

// create places a container and remembers its spec: encoded, the pod and
// container encoded as a CreateContainerRequest, or nil to encode them.
func (s *state) create(pod *abi.PodSandbox, spec *abi.Container, encoded podSpec) (*container, error) {
	c, err := s.place(pod, spec)
	if err != nil {
		s.dirty.Clear() // nothing changed
		return nil, err
	}
	if encoded == nil {
		encoded = encodeSpec(pod, spec)
	}
	c.spec = encoded
	return c, nil
}

// UpdateContainer implements policy.ContainerUpdater: the container's
// balloon inflates or deflates to its new request; every container of the
// balloon, this one included, is told its new CPUs.
func (p *Policy) UpdateContainer(r *abi.UpdateContainerRequest) (*abi.UpdateContainerResponse, error) {
	s := p.st
	id := r.GetContainer().GetId()
	c := s.ctrs[id]
	if c == nil {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_NOT_FOUND, "container.id", "container %q is not known", id)
	}
	milli := r.GetResources().GetCpuRequestMilli()
	if c.b != nil && milli != c.milli {
		b := c.b
		if room := int64(s.maxCPUs(b))*1000 - (b.milli - c.milli); milli > room {
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "resources.cpu_request_milli",
				"%dm does not fit in balloon %s: %dm left", milli, b.name(), room)
		}
		if err := s.resize(b, max(1, b.milli-c.milli+milli)); err != nil {
			s.dirty.Clear()
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "resources.cpu_request_milli", "%dm: %v", milli, err)
		}
		b.milli += milli - c.milli
	}
	c.milli = milli
	if pod, spec, err := c.spec.decode(); err == nil {
		spec.Resources = r.GetResources()
		c.spec = encodeSpec(pod, spec)
	}
	return &abi.UpdateContainerResponse{Updates: s.updates("")}, nil
}

// forget serves StopContainer and RemoveContainer (containers.Forget): the
// container leaves its balloon at once.
func (p *Policy) forget(id string) []*abi.ContainerUpdate {
	p.st.remove(id)
	return p.st.updates("")
}

// Synchronize implements policy.Synchronizer: containers the runtime no
// longer runs are forgotten, unknown ones are placed (and told so by an
// update).
func (p *Policy) Synchronize(r *abi.SynchronizeRequest) (*abi.SynchronizeResponse, error) {
	s := p.st
	live := map[string]bool{}
	var fresh []*abi.Container
	for _, c := range r.GetContainers() {
		if c.GetState() == abi.ContainerState_CONTAINER_STATE_STOPPED || c.GetId() == "" || live[c.GetId()] {
			continue
		}
		live[c.GetId()] = true
		if s.ctrs[c.GetId()] == nil {
			fresh = append(fresh, c)
		}
	}
	for _, id := range sortedKeys(s.ctrs) {
		if !live[id] {
			s.remove(id)
		}
	}
	pods := map[string]*abi.PodSandbox{}
	for _, pod := range r.GetPods() {
		pods[pod.GetId()] = pod
	}
	slices.SortFunc(fresh, func(a, b *abi.Container) int { return cmp.Compare(a.GetId(), b.GetId()) })
	for _, spec := range fresh {
		c, err := s.create(pods[spec.GetPodSandboxId()], spec, nil)
		if err != nil {
			// It runs already: leave it where it is rather than refuse the sync.
			policy.Log.Warnf("synchronize: container %s left unmanaged: %v", spec.GetId(), err)
			continue
		}
		if c.b != nil {
			s.markDirty(c.b)
			c.cpus, c.mems = "", "" // not given yet: the update gives it
		}
	}
	return &abi.SynchronizeResponse{Updates: s.updates("")}, nil
}

// Reconfigure implements policy.Reconfigurer: the new configuration gets a
// fresh state; prepared claims stay bound to the instance of the same
// device (a configuration without it is refused), every container is
// placed again (in id order) and answers an update where its CPUs or memory
// nodes changed. On any error the old configuration stays in force:
// INVALID_ARGUMENT for a configuration that does not parse or check,
// FAILED_PRECONDITION for a valid one the running containers and claims keep
// from applying live (the host may apply it by a swap).
func (p *Policy) Reconfigure(r *abi.ReconfigureRequest) (*abi.ReconfigureResponse, error) {
	cfg, err := ParseConfig(r.GetConfig())
	if err != nil {
		return nil, err
	}
	old := p.st
	st, err := newState(cfg, old.ix, old.driver)
	if err != nil {
		return nil, err
	}
	if err := st.createMinBalloons(); err != nil {
		return nil, err
	}
	for _, uid := range sortedKeys(old.claims) {
		oc := old.claims[uid]
		dev := deviceName(oc.b.t.Name, oc.b.inst)
		b := st.device(dev)
		if b == nil {
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, field("balloonTypes"),
				"claim %s is bound to DRA device %s, which the new configuration does not publish", uid, dev)
		}
		st.bind(oc.spec, b).devices = oc.devices
	}
	for _, id := range sortedKeys(old.ctrs) {
		kept := old.ctrs[id].spec
		pod, spec, err := kept.decode()
		if err == nil {
			_, err = st.create(pod, spec, kept)
		}
		if err != nil {
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, field(), "container %s no longer fits: %v", id, err)
		}
	}
	st.updates("") // settles every container's CPUs; the diff below answers
	var updates []*abi.ContainerUpdate
	for _, id := range sortedKeys(st.ctrs) {
		c, o := st.ctrs[id], old.ctrs[id]
		oCPUs, oMems := o.lists()
		cpus, mems := c.lists()
		if u := abi.ChangedUpdate(id, oCPUs, cpus, oMems, mems); u != nil {
			updates = append(updates, u)
		}
	}
	p.st = st
	return &abi.ReconfigureResponse{WantsDra: st.wantsDRA(), Updates: updates}, nil
}
