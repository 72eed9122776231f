#!/bin/sh
# Entry point of every Switchboard image. The image holds one service, named by
# SWITCHBOARD_SERVICE (set from the SERVICE build argument). Subcommands:
#   serve       (default) the service itself       node apps/<service>/dist/main.js
#   migrate     its database migrations, then exit  node apps/<service>/dist/migrate.js
#   bootstrap   first organization + operator key   node apps/<service>/dist/bootstrap.js
# Anything else is executed as given (e.g. `node -e ...`). `exec` keeps node as PID 1 so that
# SIGTERM reaches the service and it shuts down gracefully.
set -eu

service="${SWITCHBOARD_SERVICE:?SWITCHBOARD_SERVICE is not set (build the image with --build-arg SERVICE=...)}"
app="/app/apps/${service}"

command="${1:-serve}"
[ "$#" -gt 0 ] && shift

case "$command" in
  serve) target=main ;;
  migrate) target=migrate ;;
  bootstrap) target=bootstrap ;;
  *) exec "$command" "$@" ;;
esac

if [ ! -f "${app}/dist/${target}.js" ]; then
  echo "switchboard: ${service} has no '${command}' command (apps/${service}/dist/${target}.js is not in this image)" >&2
  exit 64
fi
exec node "${app}/dist/${target}.js" "$@"
