"""JMX over HTTP through the Jolokia JVM agent attached to each local node.

    client = cluster.jolokia("node1")
    client.read("java.lang:type=GarbageCollector,name=*", ["CollectionCount", "CollectionTime"])
    client.read("org.apache.cassandra.metrics:type=Table,keyspace=ks,scope=t,name=LiveSSTableCount")

A LocalCluster's agents ask for the cluster's credential (HTTP basic) and allow only reads of
the MBeans the sampler uses (see cluster.access): a refused credential is HTTP 401, a read
outside the policy (or any exec, write, list) answers status 403.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from cassperf.cluster.access import Credentials
from cassperf.errors import ClusterError


@dataclass(frozen=True)
class JolokiaEndpoint:
    """Where a node's agent answers and the credential it asks for (None: an agent without one)."""

    url: str                              # e.g. http://127.0.0.1:8778/jolokia
    credentials: Credentials | None = None

    def headers(self) -> dict[str, str]:
        if self.credentials is None:
            return {}
        token = f"{self.credentials.user}:{self.credentials.password}".encode()
        return {"Authorization": "Basic " + base64.b64encode(token).decode("ascii")}

    def request(self, path: str = "", body: Any = None, timeout_s: float = 5.0) -> Any:
        """GET `url/path` (body None) or POST `body` as JSON; the decoded JSON answer.
        ClusterError when the agent does not answer, refuses the credential, or answers no JSON."""
        full = f"{self.url.rstrip('/')}/{path}"
        headers = self.headers()
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(full, data=data, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout_s) as resp:
                return json.loads(resp.read().decode())
        except urllib.error.HTTPError as exc:
            if exc.code == 401:
                given = "no credential" if self.credentials is None else f"the credential of user {self.credentials.user!r}"
                raise ClusterError(f"Jolokia at {self.url} refused {given} (HTTP 401); a LocalCluster's agents "
                                   "take the credential in the cluster's access/jolokia.properties") from None
            raise ClusterError(f"Jolokia at {full} answered HTTP {exc.code}: {exc.reason}") from None
        except (urllib.error.URLError, OSError, json.JSONDecodeError) as exc:
            raise ClusterError(f"Jolokia at {full} did not answer: {exc}") from None


@dataclass(frozen=True)
class JolokiaClient:
    endpoint: JolokiaEndpoint
    timeout_s: float = 5.0

    @property
    def url(self) -> str:
        return self.endpoint.url

    def _get(self, path: str) -> dict[str, Any]:
        body = self.endpoint.request(path, timeout_s=self.timeout_s)
        if not isinstance(body, dict) or body.get("status") != 200:
            status, error = (body.get("status"), body.get("error")) if isinstance(body, dict) else (None, body)
            raise ClusterError(f"Jolokia at {self.url}/{path} answered status {status}: {error}")
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
