//! Binomial checkpointing (Griewank's `treeverse`, the schedule of Revolve): the order in
//! which a run of `l` steps is replayed so that its states are handed out last first, with
//! `s` stored states besides the free initial one, at the least number of forward steps.
//!
//! With `β(S, r) = C(S + r, S)` and `S = s + 1` (the initial state counts as a snapshot in
//! Griewank's notation), reversing `l` steps takes `t(l, S) = r l − β(S + 1, r − 1)` forward
//! steps, `r` the least with `β(S, r) ≥ l` (Griewank and Walther, *Evaluating
//! Derivatives*, 2008, ch. 12). The schedule splits the chain where that cost is least.

/// One action of a replay schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Step forward until the current state is this one.
    Advance(usize),
    /// Copy the current state into this slot.
    Store(usize),
    /// Make the state held by this slot (`None`: the initial, zero state) current.
    Restore(Option<usize>),
    /// The current state is the one the reverse sweep needs next.
    Use(usize),
}

/// `C(s + r, s)`, saturating at `u128::MAX / 4` (far beyond any step count).
fn beta(s: u64, r: i64) -> u128 {
    if r < 0 {
        return 0;
    }
    let mut b: u128 = 1;
    for k in 1..=r as u128 {
        b = b * (s as u128 + k) / k;
        if b > u128::MAX / 4 / (s as u128 + k + 1) {
            return u128::MAX / 4;
        }
    }
    b
}

/// The least number of forward steps that hand out the states `l - 1, …, 0` of a chain of
/// `l` steps in reverse with `slots` stored states besides the initial one.
pub(crate) fn forward_steps(l: usize, slots: usize) -> u128 {
    if l <= 1 {
        return 0;
    }
    let snaps = slots as u64 + 1;
    let mut r: i64 = 0;
    while beta(snaps, r) < l as u128 {
        r += 1;
    }
    r as u128 * l as u128 - beta(snaps + 1, r - 1)
}

/// Where to store the next state when reversing `l` steps from a held state with `slots`
/// free slots (`slots ≥ 1`, `l ≥ 2`): the advance `j` minimising
/// `j + t(l − j, slots − 1) + t(j, slots)`, a convex function of `j`, by bisection.
fn split(l: usize, slots: usize) -> usize {
    let cost = |j: usize| j as u128 + forward_steps(l - j, slots - 1) + forward_steps(j, slots);
    let (mut lo, mut hi) = (1, l - 1);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if cost(mid + 1) >= cost(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// The schedule that hands out the states `steps - 1` down to 0 of a run of `steps` steps
/// from the zero state, storing at most `slots` states at once.
pub(crate) fn schedule(steps: usize, slots: usize) -> Vec<Action> {
    let mut out = Vec::new();
    let mut free: Vec<usize> = (0..slots).rev().collect();
    if steps > 0 {
        reverse(0, steps, None, &mut free, &mut out);
    }
    out
}

/// Appends the actions that hand out states `b - 1` down to `a`, the current state being
/// `a` (held in slot `held`), with the slots `free` to spare; ends with state `a` current.
fn reverse(a: usize, b: usize, held: Option<usize>, free: &mut Vec<usize>, out: &mut Vec<Action>) {
    if b - a == 1 {
        out.push(Action::Use(a));
        return;
    }
    let Some(slot) = free.pop() else {
        for i in (a..b).rev() {
            if i < b - 1 {
                out.push(Action::Restore(held));
            }
            if i > a {
                out.push(Action::Advance(i));
            }
            out.push(Action::Use(i));
        }
        return;
    };
    let m = a + split(b - a, free.len() + 1);
    out.push(Action::Advance(m));
    out.push(Action::Store(slot));
    reverse(m, b, Some(slot), free, out);
    free.push(slot);
    out.push(Action::Restore(held));
    reverse(a, m, held, free, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `schedule` on a model of states: returns the states handed out and the forward
    /// steps taken, and checks that no more than `slots` states are stored at once.
    fn replay(steps: usize, slots: usize) -> (Vec<usize>, u128) {
        let mut cur = 0usize;
        let mut held: Vec<Option<usize>> = vec![None; slots];
        let (mut used, mut advances) = (Vec::new(), 0u128);
        for a in schedule(steps, slots) {
            match a {
                Action::Advance(to) => {
                    assert!(to > cur, "advance backwards");
                    advances += (to - cur) as u128;
                    cur = to;
                }
                Action::Store(k) => held[k] = Some(cur),
                Action::Restore(k) => cur = k.map_or(0, |k| held[k].expect("stored")),
                Action::Use(i) => {
                    assert_eq!(i, cur);
                    used.push(i);
                }
            }
        }
        (used, advances)
    }

    /// The plain recursion over every split point (independent of the closed form).
    fn brute(
        l: usize,
        s: usize,
        memo: &mut std::collections::HashMap<(usize, usize), u128>,
    ) -> u128 {
        if l <= 1 {
            return 0;
        }
        if s == 0 {
            return (l * (l - 1) / 2) as u128;
        }
        if let Some(&c) = memo.get(&(l, s)) {
            return c;
        }
        let c = (1..l)
            .map(|j| j as u128 + brute(l - j, s - 1, memo) + brute(j, s, memo))
            .min()
            .unwrap_or(0);
        memo.insert((l, s), c);
        c
    }

    #[test]
    fn schedules_hand_out_every_state_in_reverse_at_the_least_cost() {
        let mut memo = std::collections::HashMap::new();
        for steps in 1..40 {
            for slots in 0..6 {
                let (used, advances) = replay(steps, slots);
                let want: Vec<usize> = (0..steps).rev().collect();
                assert_eq!(used, want, "{steps} steps, {slots} slots");
                let best = brute(steps, slots, &mut memo);
                assert_eq!(advances, best, "{steps} steps, {slots} slots");
                assert_eq!(forward_steps(steps, slots), best);
            }
        }
    }

    #[test]
    fn binomial_formula_by_hand() {
        // l = 10, S = s + 1 snapshots: s = 0: 10 * 9 / 2; s = 1: r = 3 (β(2, 3) = 10),
        // 3 * 10 - β(3, 2) = 30 - 10; s = 2: r = 2 (β(3, 2) = 10), 2 * 10 - β(4, 1) = 20 - 5.
        assert_eq!(forward_steps(10, 0), 45);
        assert_eq!(forward_steps(10, 1), 20);
        assert_eq!(forward_steps(10, 2), 15);
        // Enough slots: every state once, l - 1 steps.
        assert_eq!(forward_steps(10, 9), 9);
        // l = 1000 with 10 % of full storage (50 checkpoints, S = 51): r = 2 (C(53, 2) =
        // 1378), 2000 - C(53, 1) = 1947; with 1 % (5, S = 6): r = 7 (C(12, 6) = 924 < 1000
        // <= C(13, 6) = 1716), 7000 - C(13, 7) = 5284.
        assert_eq!(forward_steps(1000, 50), 1947);
        assert_eq!(forward_steps(1000, 5), 5284);
    }
}
