# test/perf/offline.sh: sourced by scale.sh and bulkab.sh, which load
# synthetic catalogs into a service that must not reach out.
#
# serve_offline BIN DATA_DIR LOG [VAR=value ...] starts BIN in the
# background on $ADDR with no boot ingest and no schedule, the hash
# embedder (every ingest also embeds, offline), the publisher's API and
# workbooks at a closed port (127.0.0.1:18599), warnings only, and the
# extra settings given; it sets PID.
serve_offline() {
	local bin=$1 data=$2 log=$3
	shift 3
	env SERVICE_ADDR="$ADDR" SERVICE_DATA_DIR="$data" SERVICE_BOOT_INGEST=false SERVICE_INGEST_INTERVAL=0 \
		SERVICE_EMBEDDER=hash SERVICE_UPSTREAM_URL=http://127.0.0.1:18599 \
		SERVICE_EXCEL_URL_SV=http://127.0.0.1:18599/sv.xlsx SERVICE_EXCEL_URL_EN=http://127.0.0.1:18599/en.xlsx \
		SERVICE_LOG_LEVEL=warn "$@" "$bin" >>"$log" 2>&1 &
	PID=$!
}

# vectors_caught_up SEARCH_URL succeeds when a hybrid search at SEARCH_URL
# (with vector=true) no longer notes that vectors lag or are unavailable.
vectors_caught_up() {
	curl -fs "$1" | python3 -c 'import json,sys; sys.exit(1 if any(n.startswith(("vectors are still", "vector search unavailable")) for n in json.load(sys.stdin).get("notes") or []) else 0)' 2>/dev/null
}
