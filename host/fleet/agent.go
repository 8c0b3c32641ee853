package fleet

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/fleet/v1alpha1"
	"github.com/nriwasm/nriwasm/host/resmgr"
)

// retryAfter is how long a failed status write waits before the next try.
var retryAfter = 5 * time.Second

// applied identifies what an Applier was given: an object's generation.
type applied struct {
	uid        types.UID
	generation int64
}

// Agent keeps the node's configuration in step with the PolicyConfig
// objects that select it and reports in their status. Make one with New.
type Agent struct {
	client  kubernetes.Interface
	dynamic dynamic.Interface
	node    string
	apply   Applier
	log     logr.Logger
	kick    chan struct{}

	mu sync.Mutex
	// policy and data are the applied object's policy and configuration
	// (Overlay), set once one applied.
	policy  string
	data    []byte
	fromObj bool

	attempted applied // the last object generation given to Apply
	good      applied // the last one that applied
	outcome   Outcome // Apply's last answer (or Running)
	written   map[string]*v1alpha1.NodeStatus
}

// New returns the agent of node nodeName, which reads the node (its labels)
// with client, reads the PolicyConfig objects and writes their status with
// dyn, and applies a chosen policy and configuration with apply; Run runs
// it.
func New(client kubernetes.Interface, dyn dynamic.Interface, nodeName string, apply Applier, opts ...Option) (*Agent, error) {
	switch {
	case client == nil:
		return nil, errors.New("fleet: client: nil")
	case dyn == nil:
		return nil, errors.New("fleet: dynamic client: nil")
	case nodeName == "":
		return nil, errors.New("fleet: node name: empty")
	case apply == nil:
		return nil, errors.New("fleet: apply: nil")
	}
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	a := &Agent{client: client, dynamic: dyn, node: nodeName, apply: apply, log: o.logger,
		kick: make(chan struct{}, 1), outcome: o.running, written: map[string]*v1alpha1.NodeStatus{}}
	if s := o.started; s != nil {
		a.attempted = applied{s.UID, s.Generation}
		if o.startErr != nil {
			a.outcome.Err = o.startErr
		} else {
			a.good = a.attempted
			a.policy, a.data, a.fromObj = s.Spec.Policy, s.Spec.Config, true
		}
	}
	return a, nil
}

// Overlay puts the policy and configuration of the object last applied (if
// any) into cfg, a configuration read from the local file: in fleet mode
// the file gives every other field.
func (a *Agent) Overlay(cfg *config.Config) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fromObj {
		Overlay(cfg, a.policy, a.data)
	}
}

// Overlay sets cfg's policy and its configuration (JSON, nil for none), in
// place of the file's policy.name, policy.config and policy.configFile.
func Overlay(cfg *config.Config, policy string, data []byte) {
	cfg.Policy.Name = policy
	cfg.Policy.Config = config.RawConfig(data)
	cfg.Policy.ConfigFile = ""
	cfg.Policy.Data = data
}

// Run watches the node and the PolicyConfig objects until ctx ends.
func (a *Agent) Run(ctx context.Context) error {
	nodes := informers.NewSharedInformerFactoryWithOptions(a.client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", a.node).String()
		}))
	objs := dynamicinformer.NewDynamicSharedInformerFactory(a.dynamic, 0)
	nodeInf := nodes.Core().V1().Nodes()
	objInf := objs.ForResource(v1alpha1.GroupVersionResource)
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { a.poke() },
		UpdateFunc: func(any, any) { a.poke() },
		DeleteFunc: func(any) { a.poke() },
	}
	if _, err := nodeInf.Informer().AddEventHandler(handler); err != nil {
		return fmt.Errorf("fleet: watch node: %w", err)
	}
	if _, err := objInf.Informer().AddEventHandler(handler); err != nil {
		return fmt.Errorf("fleet: watch PolicyConfigs: %w", err)
	}
	nodes.Start(ctx.Done())
	objs.Start(ctx.Done())
	defer nodes.Shutdown()
	defer objs.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), nodeInf.Informer().HasSynced, objInf.Informer().HasSynced) {
		return nil // ctx ended
	}
	a.log.Info("fleet: watching PolicyConfigs", "node", a.node)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-a.kick:
		}
		node, err := nodeInf.Lister().Get(a.node)
		if err != nil {
			a.log.Error(err, "fleet: the node is not readable; nothing changes", "node", a.node)
			continue
		}
		list, err := objInf.Lister().List(labels.Everything())
		if err != nil {
			a.log.Error(err, "fleet: listing PolicyConfigs")
			continue
		}
		if !a.Sync(ctx, node, decode(list, a.log)) {
			time.AfterFunc(retryAfter, a.poke)
		}
	}
}

func (a *Agent) poke() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// decode converts the informer's objects; one that does not decode is
// logged and left out.
func decode[T any](list []T, log logr.Logger) []*v1alpha1.PolicyConfig {
	var out []*v1alpha1.PolicyConfig
	for _, o := range list {
		u, ok := any(o).(*unstructured.Unstructured)
		if !ok {
			continue
		}
		pc, err := v1alpha1.FromUnstructured(u)
		if err != nil {
			log.Error(err, "fleet: PolicyConfig left out")
			continue
		}
		out = append(out, pc)
	}
	return out
}

// Sync chooses for node among objs, applies the choice if its generation
// was not given to the Applier yet, and writes the node's status entries.
// It reports whether every status write succeeded.
func (a *Agent) Sync(ctx context.Context, node *corev1.Node, objs []*v1alpha1.PolicyConfig) bool {
	sel := Select(labels.Set(node.Labels), objs)
	a.mu.Lock()
	defer a.mu.Unlock()
	entries := map[string]*v1alpha1.NodeStatus{}
	switch {
	case len(sel.Conflict) > 0:
		msg := ConflictMessage(a.node, sel.Conflict)
		a.log.Error(errors.New(msg), "fleet: configuration conflict")
		for _, o := range sel.Conflict {
			entries[o.Name] = a.entry(o, metav1.ConditionFalse, v1alpha1.ReasonConflict, msg)
		}
	case sel.Chosen != nil:
		o := sel.Chosen
		key := applied{o.UID, o.Generation}
		if key != a.attempted {
			a.attempted = key
			a.outcome = a.apply(ctx, o.Spec.Policy, o.Spec.Config)
			if a.outcome.Err == nil {
				a.good = key
				a.policy, a.data, a.fromObj = o.Spec.Policy, o.Spec.Config, true
				a.log.Info("fleet: configuration applied", "policyConfig", o.Name, "generation", o.Generation)
			} else {
				a.log.Error(a.outcome.Err, "fleet: configuration not applied; the running one stays", "policyConfig", o.Name, "generation", o.Generation)
			}
		}
		entries[o.Name] = a.outcomeEntry(o)
	}
	ok := true
	for name := range a.written {
		if _, keep := entries[name]; !keep {
			ok = a.write(ctx, name, nil) && ok
		}
	}
	for name, e := range entries {
		if !reflect.DeepEqual(a.written[name], e) {
			ok = a.write(ctx, name, e) && ok
		}
	}
	return ok
}

// outcomeEntry is the status entry of the chosen object o after Apply.
func (a *Agent) outcomeEntry(o *v1alpha1.PolicyConfig) *v1alpha1.NodeStatus {
	err := a.outcome.Err
	var restart *config.RestartError
	switch {
	case err == nil:
		return a.entry(o, metav1.ConditionTrue, v1alpha1.ReasonApplied, fmt.Sprintf("generation %d runs", o.Generation))
	case errors.As(err, &restart), errors.Is(err, resmgr.ErrRestartRequired):
		return a.entry(o, metav1.ConditionFalse, v1alpha1.ReasonRestartRequired, err.Error()+": the agent applies it when it restarts; the running configuration stays until then")
	default:
		return a.entry(o, metav1.ConditionFalse, v1alpha1.ReasonInvalid, err.Error()+"; the running configuration stays")
	}
}

// entry is o's status entry for the node with the Applied condition given,
// keeping the condition's transition time when its status did not change.
func (a *Agent) entry(o *v1alpha1.PolicyConfig, status metav1.ConditionStatus, reason, msg string) *v1alpha1.NodeStatus {
	e := &v1alpha1.NodeStatus{Node: a.node, ObservedGeneration: o.Generation, Policy: a.outcome.Policy, PolicyDigest: a.outcome.PolicyDigest}
	if a.good.uid == o.UID {
		e.AppliedGeneration = a.good.generation
	}
	if prev := a.written[o.Name]; prev != nil {
		e.Conditions = append(e.Conditions, prev.Conditions...)
	}
	meta.SetStatusCondition(&e.Conditions, metav1.Condition{
		Type: v1alpha1.ConditionApplied, Status: status, Reason: reason, Message: msg, ObservedGeneration: o.Generation,
	})
	return e
}

// write applies the node's entry of object name (nil: removes it) and
// records it; a failure is logged.
func (a *Agent) write(ctx context.Context, name string, e *v1alpha1.NodeStatus) bool {
	u, err := v1alpha1.StatusApply(name, e)
	if err == nil {
		_, err = a.dynamic.Resource(v1alpha1.GroupVersionResource).ApplyStatus(ctx, name, u,
			metav1.ApplyOptions{FieldManager: v1alpha1.FieldManager(a.node), Force: true})
	}
	switch {
	case err == nil:
	case e == nil && apierrors.IsNotFound(err):
		// The object is gone, and the entry with it.
	default:
		a.log.Error(err, "fleet: writing the node's status; retrying", "policyConfig", name)
		return false
	}
	if e == nil {
		delete(a.written, name)
	} else {
		a.written[name] = e
	}
	return true
}
