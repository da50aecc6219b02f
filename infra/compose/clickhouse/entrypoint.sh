#!/bin/sh
# Writes the users file for CLICKHOUSE_USER with CLICKHOUSE_PASSWORD's SHA-256 (the password
# itself is never written), then runs the server in the foreground. The built-in `default` user
# is not defined, so only the named user can connect. The svc database is created by the
# service's own ClickHouse migrations (infra/clickhouse).
set -eu
: "${CLICKHOUSE_USER:?set CLICKHOUSE_USER}"
: "${CLICKHOUSE_PASSWORD:?set CLICKHOUSE_PASSWORD}"
case "$CLICKHOUSE_USER" in
  *[!A-Za-z0-9_]*) echo "CLICKHOUSE_USER: letters, digits and _ only" >&2; exit 64 ;;
esac
hash=$(printf '%s' "$CLICKHOUSE_PASSWORD" | sha256sum | cut -d ' ' -f 1)
umask 077
cat > /var/lib/clickhouse/users.xml <<XML
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>4000000000</max_memory_usage></default></profiles>
  <users>
    <${CLICKHOUSE_USER}>
      <password_sha256_hex>${hash}</password_sha256_hex>
      <networks><ip>::/0</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </${CLICKHOUSE_USER}>
  </users>
  <quotas><default></default></quotas>
</yandex>
XML
exec /usr/sbin/clickhouse-server --config-file=/etc/svc-clickhouse/config.xml
