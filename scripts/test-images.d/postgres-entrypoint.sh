#!/usr/bin/env bash
# Entry point of the local image idgen-test/postgres:15 (built by scripts/test-images from
# Debian's postgresql-15). It does what the test kit relies on of the official postgres image's
# docker-entrypoint.sh, in the same way:
#   - POSTGRES_USER (default postgres), POSTGRES_PASSWORD, POSTGRES_DB (default: the user),
#     POSTGRES_HOST_AUTH_METHOD (default scram-sha-256; `trust` allows an empty password),
#     POSTGRES_INITDB_ARGS, PGDATA (default /var/lib/postgresql/data);
#   - a first start runs initdb, adds `host all all all <method>` to pg_hba.conf, starts a
#     socket-only temporary server through pg_ctl (its log goes to stdout), creates the
#     database, runs /docker-entrypoint-initdb.d/*.sql and *.sh, stops the temporary server;
#   - then `postgres` runs as PID 1 as user postgres, listening on every address (`*`) on port
#     5432 and logging to stderr. So "database system is ready to accept connections" appears
#     on stdout (temporary server) and then on stderr (the real one): the two lines the
#     testcontainers postgres module waits for.
set -Eeo pipefail

if [ "${1:0:1}" = '-' ]; then
	set -- postgres "$@"
fi
if [ "$1" != postgres ]; then
	exec "$@"
fi

export PGDATA="${PGDATA:-/var/lib/postgresql/data}"
POSTGRES_USER="${POSTGRES_USER:-postgres}"
POSTGRES_DB="${POSTGRES_DB:-$POSTGRES_USER}"

if [ "$(id -u)" = 0 ]; then
	mkdir -p "$PGDATA" /var/run/postgresql
	chown -R postgres:postgres "$PGDATA" /var/run/postgresql
	chmod 700 "$PGDATA"
	chmod 3777 /var/run/postgresql
	exec setpriv --reuid=postgres --regid=postgres --init-groups "$BASH_SOURCE" "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
	if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "${POSTGRES_HOST_AUTH_METHOD:-}" != trust ]; then
		echo 'Error: Database is uninitialized and superuser password is not specified.' >&2
		echo '       Set POSTGRES_PASSWORD, or POSTGRES_HOST_AUTH_METHOD=trust.' >&2
		exit 1
	fi
	# shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a list of words, as in the official image
	if [ -n "${POSTGRES_PASSWORD:-}" ]; then
		initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") ${POSTGRES_INITDB_ARGS:-}
	else
		initdb --username="$POSTGRES_USER" ${POSTGRES_INITDB_ARGS:-}
	fi
	printf '\nhost all all all %s\n' "${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}" >>"$PGDATA/pg_hba.conf"

	export PGPASSWORD="${PGPASSWORD:-${POSTGRES_PASSWORD:-}}"
	shift
	options="-c listen_addresses='' -p 5432"
	if [ $# -gt 0 ]; then options="$(printf '%q ' "$@")$options"; fi
	NOTIFY_SOCKET='' PGUSER="$POSTGRES_USER" pg_ctl -D "$PGDATA" -o "$options" -w start
	psql=(psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --no-password --no-psqlrc)
	if [ "$POSTGRES_DB" != postgres ]; then
		"${psql[@]}" --dbname postgres --set db="$POSTGRES_DB" <<<'CREATE DATABASE :"db";'
	fi
	for f in /docker-entrypoint-initdb.d/*; do
		case "$f" in
		*.sh) echo "$0: running $f"; . "$f" ;;
		*.sql) echo "$0: running $f"; "${psql[@]}" --dbname "$POSTGRES_DB" -f "$f" ;;
		*) [ -e "$f" ] && echo "$0: ignoring $f" ;;
		esac
	done
	PGUSER="$POSTGRES_USER" pg_ctl -D "$PGDATA" -m fast -w stop
	unset PGPASSWORD
	set -- postgres "$@"
	printf '\nPostgreSQL init process complete; ready for start up.\n\n'
else
	printf '\nPostgreSQL Database directory appears to contain a database; Skipping initialization\n\n'
fi

exec "$@"
