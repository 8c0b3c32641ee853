package resmgr

import (
	"context"
	"time"

	"github.com/go-logr/logr"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/wasm"
)

// WasmLoader loads module (named name in logs) with host/wasm, as the policy
// section of cfg says: compilation cache in policy.cacheDir (seeded from
// policy.seedDir), memory cap policy.memoryLimit, deadline
// policy.callTimeout; the extra options come last (another seed, say).
func WasmLoader(name string, module []byte, cfg *config.Policy, log logr.Logger, extra ...wasm.Option) LoadFunc {
	return func(ctx context.Context, restore wasm.RestoreFunc) (Policy, error) {
		opts := []wasm.Option{
			wasm.WithRestore(restore),
			wasm.WithLogger(log),
			wasm.WithMemoryLimit(uint64(cfg.MemoryLimit)),
			wasm.WithCallTimeout(time.Duration(cfg.CallTimeout)),
		}
		if cfg.CacheDir != "" {
			opts = append(opts, wasm.WithCacheDir(cfg.CacheDir))
		}
		if cfg.SeedDir != "" {
			opts = append(opts, wasm.WithSeedDir(cfg.SeedDir))
		}
		return wasm.Load(ctx, name, module, append(opts, extra...)...)
	}
}
