//go:build integration

package containerd

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"
)

// ImageRef is the name the busybox image is imported as. It is the CRI pause
// image (pinned_images.sandbox) and the default workload image.
const ImageRef = "localhost/nriwasm/busybox:test"

// busyboxApplets are the symlinks to busybox in the image's /bin.
var busyboxApplets = []string{"sh", "sleep", "cat"}

// writeImage writes a one-layer OCI image layout archive holding the static
// busybox at /bin/busybox, applet symlinks, and a config whose default command
// sleeps forever (the pause container runs it).
func writeImage(busybox, out string) error {
	if err := checkStatic(busybox); err != nil {
		return err
	}
	bb, err := os.ReadFile(busybox)
	if err != nil {
		return fmt.Errorf("reading busybox: %w", err)
	}

	layer, diffID, err := busyboxLayer(bb)
	if err != nil {
		return err
	}
	layerDesc := descriptor("application/vnd.oci.image.layer.v1.tar+gzip", layer)

	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"config": map[string]any{
			"Env":        []string{"PATH=/bin"},
			"Cmd":        []string{"/bin/sleep", "infinity"},
			"WorkingDir": "/",
		},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{diffID}},
	})
	if err != nil {
		return fmt.Errorf("encoding the image config: %w", err)
	}
	configDesc := descriptor("application/vnd.oci.image.config.v1+json", config)

	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        configDesc,
		"layers":        []any{layerDesc},
	})
	if err != nil {
		return fmt.Errorf("encoding the image manifest: %w", err)
	}
	manifestDesc := descriptor("application/vnd.oci.image.manifest.v1+json", manifest)
	manifestDesc["platform"] = map[string]string{"architecture": runtime.GOARCH, "os": "linux"}
	manifestDesc["annotations"] = map[string]string{
		"io.containerd.image.name":          ImageRef,
		"org.opencontainers.image.ref.name": "test",
	}
	index, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.index.v1+json",
		"manifests":     []any{manifestDesc},
	})
	if err != nil {
		return fmt.Errorf("encoding the image index: %w", err)
	}

	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("creating the image archive: %w", err)
	}
	tw := tar.NewWriter(f)
	files := []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index},
		{blobPath(manifest), manifest},
		{blobPath(config), config},
		{blobPath(layer), layer},
	}
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755}); err != nil {
			f.Close()
			return fmt.Errorf("writing the image archive: %w", err)
		}
	}
	for _, file := range files {
		if err := writeFile(tw, file.name, 0o644, file.data); err != nil {
			f.Close()
			return fmt.Errorf("writing the image archive: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return fmt.Errorf("writing the image archive: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing the image archive: %w", err)
	}
	return nil
}

// busyboxLayer returns the gzipped layer and the digest of its uncompressed tar.
func busyboxLayer(bb []byte) (gz []byte, diffID string, _ error) {
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "bin/", Mode: 0o755, ModTime: epoch}); err != nil {
		return nil, "", fmt.Errorf("writing the busybox layer: %w", err)
	}
	if err := writeFile(tw, "bin/busybox", 0o755, bb); err != nil {
		return nil, "", fmt.Errorf("writing the busybox layer: %w", err)
	}
	for _, applet := range busyboxApplets {
		h := &tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + applet, Linkname: "busybox", Mode: 0o777, ModTime: epoch}
		if err := tw.WriteHeader(h); err != nil {
			return nil, "", fmt.Errorf("writing the busybox layer: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", fmt.Errorf("writing the busybox layer: %w", err)
	}

	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	if _, err := io.Copy(zw, bytes.NewReader(raw.Bytes())); err != nil {
		return nil, "", fmt.Errorf("compressing the busybox layer: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, "", fmt.Errorf("compressing the busybox layer: %w", err)
	}
	return out.Bytes(), digest(raw.Bytes()), nil
}

var epoch = time.Unix(0, 0)

func writeFile(tw *tar.Writer, name string, mode int64, data []byte) error {
	h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: epoch}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func blobPath(b []byte) string {
	sum := sha256.Sum256(b)
	return "blobs/sha256/" + hex.EncodeToString(sum[:])
}

func descriptor(mediaType string, b []byte) map[string]any {
	return map[string]any{"mediaType": mediaType, "digest": digest(b), "size": len(b)}
}

// checkStatic fails for a dynamically linked busybox (Debian's busybox
// package instead of busybox-static): the image has no libc.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("reading %s as ELF: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked; install busybox-static", path)
		}
	}
	return nil
}
