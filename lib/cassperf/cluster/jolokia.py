"""JMX over HTTP through the Jolokia JVM agent attached to each local node.

    client.read("java.lang:type=GarbageCollector,name=*", ["CollectionCount", "CollectionTime"])
    client.read("org.apache.cassandra.metrics:type=Table,keyspace=ks,scope=t,name=LiveSSTableCount")
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from cassperf.errors import ClusterError


@dataclass(frozen=True)
class JolokiaClient:
    url: str            # e.g. http://127.0.0.1:8778/jolokia
    timeout_s: float = 5.0

    def _get(self, path: str) -> dict[str, Any]:
        full = f"{self.url}/{path}"
        try:
            with urllib.request.urlopen(full, timeout=self.timeout_s) as resp:
                body = json.loads(resp.read().decode())
        except (urllib.error.URLError, OSError, json.JSONDecodeError) as exc:
            raise ClusterError(f"Jolokia at {full} did not answer: {exc}") from None
        if body.get("status") != 200:
            raise ClusterError(f"Jolokia at {full} answered status {body.get('status')}: {body.get('error')}")
        return body

    def version(self) -> dict[str, Any]:
        return self._get("version")["value"]

    def read(self, mbean: str, attributes: list[str] | str | None = None) -> Any:
        """Read MBean attributes. A wildcard mbean gives {mbean name: {attribute: value}}."""
        path = "read/" + urllib.parse.quote(mbean, safe=":=,*")
        if attributes:
            attrs = attributes if isinstance(attributes, str) else ",".join(attributes)
            path += "/" + urllib.parse.quote(attrs, safe=",")
        return self._get(path)["value"]

    def gc(self) -> dict[str, dict[str, float]]:
        """Per collector: collection_count and collection_time_ms (cumulative since JVM start)."""
        raw = self.read("java.lang:type=GarbageCollector,name=*", ["CollectionCount", "CollectionTime"])
        out = {}
        for mbean, attrs in raw.items():
            name = mbean.split("name=", 1)[1].split(",", 1)[0]
            out[name] = {"collection_count": float(attrs["CollectionCount"]),
                         "collection_time_ms": float(attrs["CollectionTime"])}
        return out

    def table_metric(self, keyspace: str, table: str, name: str) -> Any:
        return self.read(f"org.apache.cassandra.metrics:type=Table,keyspace={keyspace},scope={table},name={name}")
