package cli

import (
	"context"
	"crypto"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/oci"
	"github.com/nriwasm/nriwasm/host/oci/ref"
	"github.com/nriwasm/nriwasm/host/oci/signature"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/policies/builtin"
)

// readPolicy returns a policy module named by a built-in name or a .wasm path,
// and the name to call it by: a sealed module's own name, else the file's.
func readPolicy(ref string) (name string, module []byte, err error) {
	if !strings.HasSuffix(ref, ".wasm") && !strings.ContainsRune(ref, os.PathSeparator) {
		module, ok := builtin.Module(ref)
		if !ok {
			return "", nil, fmt.Errorf("policy %q: not a built-in policy (built in: %s) nor a .wasm path", ref, strings.Join(builtin.Names(), ", "))
		}
		return ref, module, nil
	}
	module, err = os.ReadFile(ref)
	if err != nil {
		return "", nil, fmt.Errorf("read policy: %w", err)
	}
	if md, err := wasm.ReadMetadata(module); err == nil && md.GetName() != "" {
		return md.GetName(), module, nil
	}
	return strings.TrimSuffix(ref[strings.LastIndexByte(ref, os.PathSeparator)+1:], ".wasm"), module, nil
}

// policySource resolves every kind of policy reference: a built-in name, a
// .wasm path, or an OCI reference (pulled through the cache and verified).
type policySource struct {
	// oci are the fetcher's options; mode is the verification mode they set,
	// which also decides whether a .wasm file may be loaded.
	oci  []oci.Option
	mode signature.Mode
	log  logr.Logger
	// oneShot is a command's source (check, simulate, pull): a digest the
	// registry answered that signature verification refused is an error
	// even when the cache holds an earlier verified one, which only the
	// agent falls back to.
	oneShot bool
}

// load returns the module a reference names and the name to call it by.
// Under signature.Enforce a .wasm path is refused (it carries no signature);
// built-in policies are part of the binary and always allowed.
func (s policySource) load(ctx context.Context, reference string) (string, []byte, error) {
	p, err := s.loadPolicy(ctx, reference)
	return p.name, p.module, err
}

// loadedPolicy is a policy module a reference named.
type loadedPolicy struct {
	name   string
	module []byte
	// pinned is an OCI reference pinned to the manifest digest loaded ("" for
	// a built-in policy or a file).
	pinned string
}

// loadPolicy is load with the pinned reference.
func (s policySource) loadPolicy(ctx context.Context, reference string) (loadedPolicy, error) {
	if !ref.IsReference(reference) {
		name, module, err := readPolicy(reference)
		if err != nil || !strings.HasSuffix(reference, ".wasm") && !strings.ContainsRune(reference, os.PathSeparator) {
			return loadedPolicy{name: name, module: module}, err
		}
		switch s.mode {
		case signature.Enforce:
			return loadedPolicy{}, fmt.Errorf("policy %s: a .wasm file carries no signature and verification mode is enforce: push it to a registry and sign it (docs/oci.md)", reference)
		case signature.Warn:
			s.log.Error(nil, "policy is a .wasm file, which carries no signature; loading it anyway (verification mode warn)", "policy", reference)
		}
		return loadedPolicy{name: name, module: module}, nil
	}
	r, err := ref.Parse(reference)
	if err != nil {
		return loadedPolicy{}, err
	}
	f, err := oci.NewFetcher(ctx, s.oci...)
	if err != nil {
		return loadedPolicy{}, err
	}
	m, err := f.Load(ctx, r)
	if err != nil {
		return loadedPolicy{}, err
	}
	if s.oneShot {
		if err := asked(m); err != nil {
			return loadedPolicy{}, err
		}
	}
	s.log.Info("policy loaded", "reference", m.Reference.String(), "name", m.Name, "version", m.Version,
		"signedBy", m.KeyHint, "offline", m.Offline)
	return loadedPolicy{name: m.Name, module: m.Bytes, pinned: m.Reference.String()}, nil
}

// asked fails when m is not what the registry answered for its reference
// (the registry's digest was refused and m is the cache's earlier one).
func asked(m *oci.Module) error {
	if m.Refused != "" {
		return fmt.Errorf("policy %s: the registry's digest %s is refused by signature verification (mode enforce); "+
			"the cache's earlier verified %s is not what was asked, so it is not loaded", m.Reference.String(), m.Refused, m.Digest)
	}
	return nil
}

// agentSource is the agent's policySource: the registry section of its
// configuration, credentials from the environment and the docker config.
func agentSource(cfg *config.Config, log logr.Logger) (policySource, error) {
	r := cfg.Registry
	mode := signature.Mode(r.Verification)
	remote := oci.Remote{PlainHTTP: r.PlainHTTP}
	var verifier *signature.Verifier
	if mode != signature.Off {
		v, err := loadVerifier(r.PublicKeys)
		if err != nil {
			return policySource{}, fmt.Errorf("registry.publicKeys: %w", err)
		}
		verifier = v
	}
	if cfg.Policy.IsOCI() {
		cred, err := oci.Credentials(os.Getenv)
		if err != nil {
			return policySource{}, err
		}
		remote.Credential = cred
	}
	src := policySource{log: log, mode: mode, oci: []oci.Option{
		oci.WithRemote(remote), oci.WithVerification(mode, verifier), oci.WithTimeout(time.Duration(r.Timeout)), oci.WithLogger(log),
	}}
	if r.CacheDir != "" {
		src.oci = append(src.oci, oci.WithCacheDir(r.CacheDir))
	}
	return src, nil
}

// loadVerifier trusts the PEM public keys in files.
func loadVerifier(files []string) (*signature.Verifier, error) {
	var keys []crypto.PublicKey
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		pub, err := signature.ParsePublicKey(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		keys = append(keys, pub)
	}
	return signature.NewVerifier(keys...)
}

// ociFlags are the registry and verification flags of the commands that
// read a policy.
type ociFlags struct {
	plainHTTP bool
	keys      []string
	verify    string
}

func (f *ociFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.plainHTTP, "plain-http", false, "reach the registry of an oci:// policy over plain HTTP instead of HTTPS")
	fs.StringSliceVar(&f.keys, "key", nil, "a PEM public key whose signatures are trusted (repeatable)")
	fs.StringVar(&f.verify, "verify", "", `signature verification of oci:// policies: off, warn or enforce (default "enforce" with --key, else "off")`)
}

// source is the policySource of a command: cacheDir/oci as the cache ("" for
// one in memory), credentials from the environment and the docker config.
func (f *ociFlags) source(reference, cacheDir string, log logr.Logger) (policySource, error) {
	mode := signature.Off
	if len(f.keys) > 0 {
		mode = signature.Enforce
	}
	if f.verify != "" {
		m, err := signature.ParseMode(f.verify)
		if err != nil {
			return policySource{}, fmt.Errorf("--verify: %w", err)
		}
		mode = m
		if mode == signature.Off && len(f.keys) > 0 {
			return policySource{}, fmt.Errorf("--verify off with --key: the keys would be ignored; drop --key, or use --verify warn or enforce")
		}
	}
	src := policySource{log: log, mode: mode, oneShot: true}
	if cacheDir != "" {
		src.oci = append(src.oci, oci.WithCacheDir(filepath.Join(cacheDir, "oci")))
	}
	var verifier *signature.Verifier
	if mode != signature.Off {
		if len(f.keys) == 0 {
			return policySource{}, fmt.Errorf("--verify %s: needs at least one --key", mode)
		}
		v, err := loadVerifier(f.keys)
		if err != nil {
			return policySource{}, fmt.Errorf("--key: %w", err)
		}
		verifier = v
	}
	src.oci = append(src.oci, oci.WithVerification(mode, verifier), oci.WithLogger(log))
	if r, err := ref.Parse(reference); err == nil {
		var remote oci.Remote
		if f.plainHTTP {
			remote.PlainHTTP = []string{r.Registry}
		}
		cred, err := oci.Credentials(os.Getenv)
		if err != nil {
			return policySource{}, err
		}
		remote.Credential = cred
		src.oci = append(src.oci, oci.WithRemote(remote))
	}
	return src, nil
}

// agentPolicy resolves reference (a built-in name, a .wasm path or an OCI
// reference) with cfg's registry settings into what a manager runs under
// cfg's policy section: the one path by which the agent loads a policy, at
// start (startPolicy), for a swap (resolver) and for the shadow
// (startShadow). Its identity's Reference is cfg's policy.name.
func agentPolicy(ctx context.Context, cfg *config.Config, reference string, log logr.Logger) (resmgr.Candidate, error) {
	src, err := agentSource(cfg, log)
	if err != nil {
		return resmgr.Candidate{}, err
	}
	p, err := src.loadPolicy(ctx, reference)
	if err != nil {
		return resmgr.Candidate{}, err
	}
	return resmgr.Candidate{
		Identity:   resmgr.Identity{Reference: cfg.Policy.Name, Name: p.name, Digest: resmgr.ModuleDigest(p.module), Pinned: p.pinned},
		DriverName: draDriverName(cfg, p.name),
		Load:       childCompiled(p.name, p.module, &cfg.Policy, log),
	}, nil
}

// childCompiled is resmgr.WasmLoader, but a module the load would compile
// (in neither policy.cacheDir nor policy.seedDir: a file, an OCI policy, a
// new version) starts at once on wazero's interpreter while a child process
// compiles it (childCompile), so the agent is ready without waiting for the
// compile and the compile's memory peak never lives in the agent; the
// resource manager then moves the policy to the compiled code.
func childCompiled(name string, module []byte, cfg *config.Policy, log logr.Logger) resmgr.LoadFunc {
	var extra []wasm.Option
	if exe, err := os.Executable(); err == nil && cfg.CacheDir != "" {
		extra = append(extra, wasm.WithBackgroundCompile(childCompile(cfg.CacheDir, exe, nil, log.WithValues("policy", name))))
	}
	return resmgr.WasmLoader(name, module, cfg, log, extra...)
}

// loadLogged loads the policy --policy names with a logger on the command's
// stderr at --policy-log's level, which it returns for the policy's own logs.
func (f *policyFlags) loadLogged(cmd *cobra.Command) (logr.Logger, string, []byte, error) {
	handler, err := f.logHandler(cmd.ErrOrStderr())
	if err != nil {
		return logr.Logger{}, "", nil, err
	}
	logger := logr.FromSlogHandler(handler)
	name, module, err := f.load(cmd.Context(), logger)
	return logger, name, module, err
}

// load loads the policy --policy names.
func (f *policyFlags) load(ctx context.Context, log logr.Logger) (string, []byte, error) {
	src, err := f.oci.source(f.policy, f.cacheDir, log)
	if err != nil {
		return "", nil, err
	}
	return src.load(ctx, f.policy)
}
