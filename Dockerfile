# A static ioprobe on a distroless base, running as a non-root user.
#   make image        (docker build with VERSION and REVISION from git)
# or, after make build or make image has written .version:
#   docker build -t ioprobe .
#   docker run --rm -p 9816:9816 -v /var/lib/ioprobe:/data \
#     -v $PWD/configs/ioprobe.yaml:/etc/ioprobe/ioprobe.yaml:ro ioprobe
# (with the config's target path under /data). The data directory must be
# on a disk, not tmpfs, and writable by uid 65532.
# Base images pinned by version: the Go of go.mod on Debian 12, and
# distroless' Debian 12 static image (distroless publishes no finer tag; pin
# its digest, `FROM ...:nonroot@sha256:...`, where your builds must be
# reproducible).
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The build's name in `ioprobe version` and ioprobe_build_info. The context
# has no .git (.dockerignore) to ask: make image passes both as build
# arguments; without them they come from .version, which make build and
# make image write; without that, "dev" and "unknown".
ARG VERSION
ARG REVISION
RUN v="${VERSION:-$(sed -n 's/^VERSION=//p' .version 2>/dev/null)}"; \
    r="${REVISION:-$(sed -n 's/^REVISION=//p' .version 2>/dev/null)}"; \
    CGO_ENABLED=0 make build VERSION="${v:-dev}" REVISION="${r:-unknown}"

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/bin/ioprobe /usr/local/bin/ioprobe
USER 65532:65532
EXPOSE 9816
ENTRYPOINT ["/usr/local/bin/ioprobe"]
CMD ["serve", "--config", "/etc/ioprobe/ioprobe.yaml"]
