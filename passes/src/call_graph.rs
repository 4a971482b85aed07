//! The call graph: bodies reachable through local calls, as a `petgraph`
//! graph. The one reachability analysis of the module: admission's
//! transitive rules (CUDA calls, foreign calls, recursion) and the chains
//! their notes show, the trial lowering, and the lowering's plan (which
//! bodies are lowered) all read it.

use std::collections::{BTreeMap, VecDeque};

use petgraph::graph::{DiGraph, NodeIndex};

use ir::facts::{CallFact, CallKind, ModuleFacts};

pub struct CallGraph {
    pub graph: DiGraph<String, usize>,
    pub nodes: BTreeMap<String, NodeIndex>,
    pub root: Option<NodeIndex>,
}

impl CallGraph {
    /// Every body reachable from `root` through local calls; an edge per call
    /// site (weighted by its index in the caller's calls).
    pub fn build(facts: &ModuleFacts, root: Option<&str>) -> CallGraph {
        let mut g = CallGraph::from_roots(facts, root.as_slice());
        g.root = root.and_then(|r| g.nodes.get(r).copied());
        g
    }

    /// Every body reachable from any of `roots` (no single root: chains
    /// and [`Self::bodies`] need [`Self::build`]). A name without a body
    /// in `facts` is a node with no edges: see [`Self::missing`].
    pub fn from_roots(facts: &ModuleFacts, roots: &[&str]) -> CallGraph {
        let mut graph = DiGraph::new();
        let mut nodes = BTreeMap::new();
        let mut queue = VecDeque::new();
        for r in roots {
            if !nodes.contains_key(*r) {
                let i = graph.add_node(r.to_string());
                nodes.insert(r.to_string(), i);
                queue.push_back(r.to_string());
            }
        }
        while let Some(name) = queue.pop_front() {
            let Some(body) = facts.bodies.get(&name) else {
                continue;
            };
            let from = nodes[&name];
            for (k, call) in body.calls.iter().enumerate() {
                if call.kind != CallKind::Local {
                    continue;
                }
                let Some(target) = &call.target else { continue };
                let to = match nodes.get(target) {
                    Some(i) => *i,
                    None => {
                        let i = graph.add_node(target.clone());
                        nodes.insert(target.clone(), i);
                        queue.push_back(target.clone());
                        i
                    }
                };
                graph.add_edge(from, to, k);
            }
        }
        CallGraph {
            graph,
            nodes,
            root: None,
        }
    }

    /// Reached names that have no body in `facts`.
    pub fn missing<'g>(&'g self, facts: &ModuleFacts) -> Vec<&'g str> {
        self.nodes
            .keys()
            .filter(|n| !facts.bodies.contains_key(n.as_str()))
            .map(String::as_str)
            .collect()
    }

    /// Reachable bodies in a stable order (breadth first from the root, each
    /// body's calls in their order).
    pub fn bodies(&self) -> Vec<&str> {
        let mut out: Vec<(usize, &str)> = Vec::new();
        let Some(root) = self.root else {
            return Vec::new();
        };
        let dist = self.distances(root);
        for (name, idx) in &self.nodes {
            if let Some(d) = dist.get(idx) {
                out.push((*d, name));
            }
        }
        out.sort();
        out.into_iter().map(|(_, n)| n).collect()
    }

    fn distances(&self, from: NodeIndex) -> BTreeMap<NodeIndex, usize> {
        let mut dist = BTreeMap::new();
        let mut q = VecDeque::from([from]);
        dist.insert(from, 0);
        while let Some(n) = q.pop_front() {
            let d = dist[&n];
            for m in self.graph.neighbors(n) {
                if let std::collections::btree_map::Entry::Vacant(e) = dist.entry(m) {
                    e.insert(d + 1);
                    q.push_back(m);
                }
            }
        }
        dist
    }

    /// The shortest chain of bodies from the root to `body`, both included.
    pub fn chain_to(&self, body: &str) -> Vec<String> {
        let (Some(root), Some(&target)) = (self.root, self.nodes.get(body)) else {
            return vec![body.to_string()];
        };
        let mut parent: BTreeMap<NodeIndex, NodeIndex> = BTreeMap::new();
        let mut q = VecDeque::from([root]);
        let mut seen = std::collections::BTreeSet::from([root]);
        while let Some(n) = q.pop_front() {
            if n == target {
                break;
            }
            // Neighbours in call order, so chains are stable.
            let mut next: Vec<(usize, NodeIndex)> = self
                .graph
                .edges(n)
                .map(|e| (*e.weight(), petgraph::visit::EdgeRef::target(&e)))
                .collect();
            next.sort();
            for (_, m) in next {
                if seen.insert(m) {
                    parent.insert(m, n);
                    q.push_back(m);
                }
            }
        }
        let mut chain = vec![self.graph[target].clone()];
        let mut cur = target;
        while let Some(p) = parent.get(&cur) {
            chain.push(self.graph[*p].clone());
            cur = *p;
        }
        chain.reverse();
        chain
    }

    /// `a → b → callee`, for notes.
    pub fn chain_text(&self, body: &str, call: &CallFact) -> String {
        let mut chain = self.chain_to(body);
        chain.push(call.callee.clone());
        chain.join(" → ")
    }
}
