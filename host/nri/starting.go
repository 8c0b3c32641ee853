package nri

import (
	"sync"

	"github.com/containerd/nri/pkg/api"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// starting tracks containers the runtime has created but not started, and
// the updates sent to them meanwhile.
//
// A runtime records an update of a container that is not running yet but
// does not apply it: runc created the container's cgroup already, and the
// start does not read the record again (containerd 2.4: the record says the
// new cpuset, the cgroup keeps the old one). Later Synchronize rounds see
// records that agree with the journal and never repair it. So every update
// sent to a container between its creation and its start (in a Synchronize
// or CreateContainer reply, or from the unsolicited queue) is kept, merged,
// and sent again once the runtime reports the container started.
type starting struct {
	mu      sync.Mutex
	created map[string]bool                 // created, not started
	owed    map[string]*abi.ContainerUpdate // sent while created, to send again at start
}

func newStarting() *starting {
	return &starting{created: map[string]bool{}, owed: map[string]*abi.ContainerUpdate{}}
}

// synchronized resets the created containers to those the runtime reports in
// that state.
func (s *starting) synchronized(ctrs []*api.Container) {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.created)
	for _, c := range ctrs {
		if c.GetState() == api.ContainerState_CONTAINER_CREATED {
			s.created[c.GetId()] = true
		}
	}
	for id := range s.owed {
		if !s.created[id] {
			delete(s.owed, id)
		}
	}
}

// create notes a container being created.
func (s *starting) create(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.created[id] = true
}

// sent notes updates going to the runtime, a group's per member; those of
// containers not started are owed again at their start.
func (s *starting) sent(us []*abi.ContainerUpdate) {
	if len(us) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, u := range abi.EachContainer(us) {
		if !s.created[id] {
			continue
		}
		o := s.owed[id]
		if o == nil {
			s.owed[id] = &abi.ContainerUpdate{ContainerId: id, CpusetCpus: u.CpusetCpus, CpusetMems: u.CpusetMems, RdtClass: u.RdtClass, BlockioClass: u.BlockioClass}
			continue
		}
		if u.CpusetCpus != "" {
			o.CpusetCpus = u.CpusetCpus
		}
		if u.CpusetMems != "" {
			o.CpusetMems = u.CpusetMems
		}
		if u.RdtClass != "" {
			o.RdtClass = u.RdtClass
		}
		if u.BlockioClass != "" {
			o.BlockioClass = u.BlockioClass
		}
	}
}

// started notes a container's start and returns the update owed to it, nil
// if none.
func (s *starting) started(id string) *abi.ContainerUpdate {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.created, id)
	u := s.owed[id]
	delete(s.owed, id)
	return u
}

// gone forgets a stopped or removed container.
func (s *starting) gone(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.created, id)
	delete(s.owed, id)
}
