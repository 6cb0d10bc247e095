//! The order in which `dedup.pairs` and `dedup.groups` weigh the edges of their
//! candidate graph, so that a small cache of decoded documents serves them: nodes
//! ranked breadth-first (components one after another, each from its first node),
//! each edge taken from its lower-ranked end to its higher, edges sorted by those
//! ranks, and the position after which each node is needed no more.
//!
//! Pure Rust, no pgrx.

/// Breadth-first rank of each of `n` nodes, so that the two ends of an edge are
/// usually close in rank. Edges name nodes below `n`.
pub fn bfs_rank(n: usize, edges: &[(u32, u32)]) -> Vec<u32> {
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        adj[a as usize].push(b);
        adj[b as usize].push(a);
    }
    let mut rank = vec![u32::MAX; n];
    let mut next = 0u32;
    let mut queue = std::collections::VecDeque::new();
    for start in 0..n {
        if rank[start] != u32::MAX {
            continue;
        }
        rank[start] = next;
        next += 1;
        queue.push_back(start as u32);
        while let Some(u) = queue.pop_front() {
            for &v in &adj[u as usize] {
                if rank[v as usize] == u32::MAX {
                    rank[v as usize] = next;
                    next += 1;
                    queue.push_back(v);
                }
            }
        }
    }
    rank
}

/// The edges in weighing order, each as (lower-ranked end, higher-ranked end,
/// whether that swapped the edge), and for each node the last position in that
/// order that needs it (0 for a node no edge names).
pub fn plan(n: usize, edges: &[(u32, u32)]) -> (Vec<(u32, u32, bool)>, Vec<usize>) {
    let rank = bfs_rank(n, edges);
    let mut work: Vec<(u32, u32, bool)> = edges
        .iter()
        .map(|&(a, b)| {
            if rank[a as usize] <= rank[b as usize] {
                (a, b, false)
            } else {
                (b, a, true)
            }
        })
        .collect();
    work.sort_unstable_by_key(|&(lo, hi, _)| (rank[lo as usize], rank[hi as usize]));
    let mut last_use = vec![0usize; n];
    for (p, &(lo, hi, _)) in work.iter().enumerate() {
        last_use[lo as usize] = p;
        last_use[hi as usize] = p;
    }
    (work, last_use)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_follow_components_breadth_first() {
        // 0-2, 2-3 and 1-4: the component of 0 first (0, 2, 3), then 1's (1, 4).
        let r = bfs_rank(5, &[(0, 2), (2, 3), (1, 4)]);
        assert_eq!(r, vec![0, 3, 1, 2, 4]);
        assert_eq!(bfs_rank(0, &[]), Vec::<u32>::new());
        assert_eq!(bfs_rank(3, &[]), vec![0, 1, 2]);
    }

    #[test]
    fn edges_run_from_lower_rank_and_nodes_leave_after_last_use() {
        let (work, last) = plan(5, &[(3, 2), (0, 2), (4, 1)]);
        assert_eq!(work, vec![(0, 2, false), (2, 3, true), (1, 4, true)]);
        assert_eq!(last, vec![0, 2, 1, 1, 2]);
        // Every edge is kept, once, with its swap recorded.
        let (work, _) = plan(3, &[(2, 0), (0, 1), (1, 2)]);
        let mut back: Vec<(u32, u32)> = work
            .iter()
            .map(|&(lo, hi, s)| if s { (hi, lo) } else { (lo, hi) })
            .collect();
        back.sort_unstable();
        assert_eq!(back, vec![(0, 1), (1, 2), (2, 0)]);
    }
}
