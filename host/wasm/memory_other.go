//go:build !linux

package wasm

import "github.com/tetratelabs/wazero/experimental"

// memoryAllocator is nil off Linux: wazero's default allocator.
var memoryAllocator experimental.MemoryAllocator
