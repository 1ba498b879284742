#!/usr/bin/env bash
# Installs the Debian packages the interop suite needs, only when they are missing (needs root).
set -euo pipefail
need=()
command -v curl >/dev/null || need+=(curl)
command -v protoc >/dev/null || need+=(protobuf-compiler)
[ -x /usr/bin/grpc_python_plugin ] || need+=(protobuf-compiler-grpc)
[ -x /usr/bin/python3 ] || need+=(python3)
/usr/bin/python3 -c 'import grpc, google.protobuf' 2>/dev/null || need+=(python3-grpcio python3-protobuf)
[ -x /usr/bin/chromium ] || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  echo "interop: installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
