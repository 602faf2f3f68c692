#!/usr/bin/env bash
# Entry point of the local image idgen-test/mariadb:10.11 (built by scripts/test-images from
# Debian's mariadb-server). It does what the test kit relies on of the official mariadb image's
# docker-entrypoint.sh, in the same way:
#   - MARIADB_ALLOW_EMPTY_ROOT_PASSWORD, MARIADB_ROOT_PASSWORD, MARIADB_ROOT_HOST (default %),
#     MARIADB_DATABASE, MARIADB_USER, MARIADB_PASSWORD, each also under its MYSQL_* name
#     (MYSQL_ALLOW_EMPTY_PASSWORD, MYSQL_ROOT_PASSWORD, MYSQL_DATABASE, ...);
#   - a first start runs mariadb-install-db, starts a temporary server without networking
#     (it logs "port: 0"), creates root@'<root host>', the database and the user, runs
#     /docker-entrypoint-initdb.d/*.sql and *.sh, stops the temporary server;
#   - then `mariadbd` runs as PID 1 as user mysql, listening on every address on port 3306 and
#     logging to stderr: "mariadbd: ready for connections." and "port: 3306", the lines the
#     testcontainers mariadb module waits for.
set -Eeo pipefail

note() { printf '%s [Note] [Entrypoint]: %s\n' "$(date --rfc-3339=seconds)" "$*"; }
fail() { printf '%s [ERROR] [Entrypoint]: %s\n' "$(date --rfc-3339=seconds)" "$*" >&2; exit 1; }

if [ "${1:0:1}" = '-' ]; then
	set -- mariadbd "$@"
fi
if [ "$1" != mariadbd ] && [ "$1" != mysqld ]; then
	exec "$@"
fi

DATADIR=/var/lib/mysql
SOCKET=/run/mysqld/mysqld.sock

if [ "$(id -u)" = 0 ]; then
	mkdir -p "$DATADIR" /run/mysqld
	chown -R mysql:mysql "$DATADIR" /run/mysqld
	exec setpriv --reuid=mysql --regid=mysql --init-groups "$BASH_SOURCE" "$@"
fi

: "${MARIADB_ALLOW_EMPTY_ROOT_PASSWORD:=${MYSQL_ALLOW_EMPTY_PASSWORD:-}}"
: "${MARIADB_ROOT_PASSWORD:=${MYSQL_ROOT_PASSWORD:-}}"
: "${MARIADB_ROOT_HOST:=${MYSQL_ROOT_HOST:-%}}"
: "${MARIADB_DATABASE:=${MYSQL_DATABASE:-}}"
: "${MARIADB_USER:=${MYSQL_USER:-}}"
: "${MARIADB_PASSWORD:=${MYSQL_PASSWORD:-}}"

sql_string() { local s=${1//\\/\\\\}; printf "'%s'" "${s//\'/\\\'}"; }

if [ ! -d "$DATADIR/mysql" ]; then
	if [ -z "$MARIADB_ROOT_PASSWORD" ] && [ -z "$MARIADB_ALLOW_EMPTY_ROOT_PASSWORD" ]; then
		fail 'Database is uninitialized and password option is not specified. You need to specify one of MARIADB_ROOT_PASSWORD or MARIADB_ALLOW_EMPTY_ROOT_PASSWORD'
	fi
	note "Initializing database files"
	mariadb-install-db --datadir="$DATADIR" --rpm --auth-root-authentication-method=normal \
		--skip-test-db --default-time-zone=SYSTEM --enforce-storage-engine= --skip-log-bin \
		--expire-logs-days=0 --loose-innodb_buffer_pool_load_at_startup=0 \
		--loose-innodb_buffer_pool_dump_at_shutdown=0 "${@:2}" >/dev/null
	note "Database files initialized"

	note "Starting temporary server"
	"$@" --skip-networking --default-time-zone=SYSTEM --socket="$SOCKET" --expire-logs-days=0 \
		--loose-innodb_buffer_pool_load_at_startup=0 &
	pid=$!
	client=(mariadb --protocol=socket -uroot -hlocalhost --socket="$SOCKET")
	for _ in $(seq 300); do
		if "${client[@]}" --database=mysql <<<'SELECT 1' >/dev/null 2>&1; then break; fi
		kill -0 "$pid" 2>/dev/null || fail "Unable to start server."
		sleep 0.1
	done
	note "Temporary server started."

	password=$(sql_string "$MARIADB_ROOT_PASSWORD")
	{
		echo "SET @@SESSION.SQL_LOG_BIN=0;"
		echo "DELETE FROM mysql.global_priv WHERE user='' OR (user='root' AND host NOT IN ('localhost'));"
		echo "SET PASSWORD FOR 'root'@'localhost' = PASSWORD($password);"
		if [ "$MARIADB_ROOT_HOST" != localhost ]; then
			echo "CREATE USER 'root'@'$MARIADB_ROOT_HOST' IDENTIFIED BY $password;"
			echo "GRANT ALL ON *.* TO 'root'@'$MARIADB_ROOT_HOST' WITH GRANT OPTION;"
			echo "GRANT PROXY ON ''@'%' TO 'root'@'$MARIADB_ROOT_HOST' WITH GRANT OPTION;"
		fi
		if [ -n "$MARIADB_DATABASE" ]; then
			note "Creating database ${MARIADB_DATABASE}" >&2
			echo "CREATE DATABASE IF NOT EXISTS \`$MARIADB_DATABASE\`;"
		fi
		if [ -n "$MARIADB_USER" ]; then
			note "Creating user ${MARIADB_USER}" >&2
			echo "CREATE USER '$MARIADB_USER'@'%' IDENTIFIED BY $(sql_string "$MARIADB_PASSWORD");"
			if [ -n "$MARIADB_DATABASE" ]; then
				echo "GRANT ALL ON \`${MARIADB_DATABASE}\`.* TO '$MARIADB_USER'@'%';"
			fi
		fi
		echo "FLUSH PRIVILEGES;"
	} | "${client[@]}" --database=mysql

	client+=(--password="$MARIADB_ROOT_PASSWORD")
	for f in /docker-entrypoint-initdb.d/*; do
		case "$f" in
		*.sh) note "$0: running $f"; . "$f" ;;
		*.sql) note "$0: running $f"; "${client[@]}" ${MARIADB_DATABASE:+--database="$MARIADB_DATABASE"} <"$f" ;;
		*) [ -e "$f" ] && note "$0: ignoring $f" ;;
		esac
	done

	note "Stopping temporary server"
	kill "$pid"
	wait "$pid"
	note "Temporary server stopped"
	note "MariaDB init process done. Ready for start up."
fi

exec "$@"
