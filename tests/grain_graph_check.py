#!/usr/bin/env python3
"""grain_graph_check.py - checks a grains.graphml and grains.dot pair.

The GraphML schema's rules that a reader relies on, checked one by one
(the schema file itself is not at hand offline): the root element in the
GraphML namespace; every <key> with an id, a domain (for) of node, edge or
all, an attr.name and an attr.type of the schema's list; every <data> of a
declared key whose domain fits its element, its value of the key's type;
unique node and edge ids; every edge between declared nodes.  Then the
graph itself: acyclic.  The DOT file must hold the same nodes and edges.
Prints "nodes N edges E kinds K=n,..." and exits 1 on the first defect.
Usage: grain_graph_check.py DIR
"""
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://graphml.graphdrawing.org/xmlns}"
TYPES = {"boolean", "int", "long", "float", "double", "string"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def typed(value, t):
    try:
        if t in ("int", "long"):
            int(value)
        elif t in ("float", "double"):
            float(value)
        elif t == "boolean":
            return value in ("true", "false")
    except ValueError:
        return False
    return True


def main(d):
    root = ET.parse(d + "/grains.graphml").getroot()
    if root.tag != NS + "graphml":
        fail("root element is %s" % root.tag)
    keys = {}
    for k in root.findall(NS + "key"):
        kid, dom = k.get("id"), k.get("for")
        if not kid or dom not in ("node", "edge", "all", "graph"):
            fail("key %s: domain %s" % (kid, dom))
        if not k.get("attr.name") or k.get("attr.type") not in TYPES:
            fail("key %s: attr.name/attr.type" % kid)
        keys[kid] = (dom, k.get("attr.type"))
    graphs = root.findall(NS + "graph")
    if len(graphs) != 1 or graphs[0].get("edgedefault") != "directed":
        fail("one directed graph expected")
    nodes, kinds, succ = {}, {}, {}
    for n in graphs[0].findall(NS + "node"):
        nid = n.get("id")
        if not nid or nid in nodes:
            fail("node id %s missing or repeated" % nid)
        data = {}
        for x in n.findall(NS + "data"):
            k = keys.get(x.get("key"))
            if not k or k[0] not in ("node", "all"):
                fail("node %s: undeclared key %s" % (nid, x.get("key")))
            if not typed(x.text or "", k[1]):
                fail("node %s: %s=%r is no %s" % (nid, x.get("key"), x.text, k[1]))
            data[x.get("key")] = x.text
        nodes[nid] = data
        kinds[data.get("kind")] = kinds.get(data.get("kind"), 0) + 1
        succ[nid] = []
    eids, nedges = set(), 0
    for e in graphs[0].findall(NS + "edge"):
        s, t = e.get("source"), e.get("target")
        if e.get("id") in eids or s not in nodes or t not in nodes:
            fail("edge %s: %s -> %s" % (e.get("id"), s, t))
        eids.add(e.get("id"))
        for x in e.findall(NS + "data"):
            k = keys.get(x.get("key"))
            if not k or k[0] not in ("edge", "all") or not typed(x.text or "", k[1]):
                fail("edge %s: data %s" % (e.get("id"), x.get("key")))
        succ[s].append(t)
        nedges += 1
    # acyclic: Kahn's algorithm
    indeg = {n: 0 for n in nodes}
    for s in succ:
        for t in succ[s]:
            indeg[t] += 1
    ready = [n for n in nodes if indeg[n] == 0]
    seen = 0
    while ready:
        n = ready.pop()
        seen += 1
        for t in succ[n]:
            indeg[t] -= 1
            if indeg[t] == 0:
                ready.append(t)
    if seen != len(nodes):
        fail("the graph has a cycle")
    dot = open(d + "/grains.dot").read()
    dn = len(re.findall(r"^  \w+ \[label=", dot, re.M))
    de = len(re.findall(r"^  \w+ -> \w+ ", dot, re.M))
    if dn != len(nodes) or de != nedges or not dot.startswith("digraph "):
        fail("DOT has %d nodes and %d edges, GraphML %d and %d"
             % (dn, de, len(nodes), nedges))
    print("nodes %d edges %d kinds %s" % (len(nodes), nedges, ",".join(
        "%s=%d" % (k, v) for k, v in sorted(kinds.items(), key=str))))


main(sys.argv[1])
