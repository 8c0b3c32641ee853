package balloons_test

import "testing"

func TestSmoke(t *testing.T) {
	h := mustOpen(t, nativeOpen, "Server2Socket4NodesInterleaved", "balloonTypes:\n- name: fast\n  namespaces: [prod]\n  maxCPUs: 4\n  shareIdleCPUsInSame: numa\n")
	h.create(ctr("a", 1500).in("prod"))
	h.create(ctr("b", 1500).in("prod"))
	h.create(ctr("c", 1500).in("prod"))
	h.create(ctr("d", 500))
	h.create(ctr("k", 100).in("kube-system"))
	t.Logf("%+v", h.dump())
	h.remove("b")
	t.Logf("%+v", h.dump())
}
