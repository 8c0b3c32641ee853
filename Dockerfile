# The nriwasm agent's image: one static binary (the built-in policies are
# embedded) and their compiled code (/usr/lib/nriwasm/seed) on
# distroless/static. Built where a container engine exists (not in CI here):
#
#   docker build -t ghcr.io/nriwasm/nriwasm:0.1.0 .
#
# Pin the base images by digest for a release build:
#   --build-arg GO_IMAGE=golang:1.26.8-bookworm@sha256:… --build-arg BASE_IMAGE=…@sha256:…
ARG GO_IMAGE=golang:1.26.8-bookworm
ARG BASE_IMAGE=gcr.io/distroless/static-debian12

FROM ${GO_IMAGE} AS build
WORKDIR /src
# Modules first, so a source change reuses the download layer.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static (no cgo: nothing links libc), reproducible (trimmed paths, no VCS
# stamp), stripped.
RUN CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -ldflags "-s -w" -o /out/nriwasm ./host/cmd/nriwasm
# The built-in policies' compiled code for this architecture, written by the
# binary itself (same wazero build) with a sha256 manifest: a node that never
# ran them copies it into its cache after checking it instead of compiling
# (policy.seedDir; docs/performance.md, "Footprint"). Built under emulation for
# another platform, the CPU features recorded may differ from a real node's:
# the agent then logs why and compiles.
RUN /out/nriwasm policy precompile --out /out/seed && chmod -R a-w /out/seed

FROM ${BASE_IMAGE}
COPY --from=build /out/nriwasm /usr/bin/nriwasm
COPY --from=build /out/seed /usr/lib/nriwasm/seed
# The agent runs as root, with every capability dropped by the chart: the
# runtime's NRI socket (/var/run/nri/nri.sock, mode 0600) and kubelet's
# plugins and plugins_registry directories are root's, and it writes CDI
# specs into /var/run/cdi and its state into /var/lib/nriwasm. As their
# owner, uid 0 needs no capability for any of this (charts/nriwasm/README.md).
USER 0:0
ENTRYPOINT ["/usr/bin/nriwasm"]
CMD ["run"]
