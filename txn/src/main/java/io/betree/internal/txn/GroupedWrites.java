package io.betree.internal.txn;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * A commit's writes grouped by the tree they go to, so that each tree takes its share in one turn
 * ({@link ApplyTurns}). Trees are told apart by identity.
 */
final class GroupedWrites {
    private GroupedWrites() {
    }

    /**
     * The writes grouped by {@code tree}, groups in the order their trees first appear, writes in
     * their order. A transaction hands its writes over index by index, so each tree's writes are
     * usually one run of {@code writes}: those runs are returned as views, not copied; only when a
     * tree's writes come in more than one run are they copied into groups.
     */
    static <W> List<List<W>> byTree(List<W> writes, Function<W, ?> tree) {
        List<List<W>> runs = new ArrayList<>(2);
        int start = 0;
        for (int i = 1; i <= writes.size(); i++) {
            if (i == writes.size() || tree.apply(writes.get(i)) != tree.apply(writes.get(start))) {
                Object t = tree.apply(writes.get(start));
                for (List<W> run : runs) {
                    if (tree.apply(run.get(0)) == t) {
                        return copiedGroups(writes, tree);
                    }
                }
                runs.add(writes.subList(start, i));
                start = i;
            }
        }
        return runs;
    }

    private static <W> List<List<W>> copiedGroups(List<W> writes, Function<W, ?> tree) {
        List<List<W>> groups = new ArrayList<>(2);
        for (W w : writes) {
            List<W> group = null;
            for (List<W> g : groups) {
                if (tree.apply(g.get(0)) == tree.apply(w)) {
                    group = g;
                    break;
                }
            }
            if (group == null) {
                group = new ArrayList<>();
                groups.add(group);
            }
            group.add(w);
        }
        return groups;
    }

    /** The tree of each group of {@link #byTree}, in order. */
    static <W, T> List<T> trees(List<List<W>> groups, Function<W, T> tree) {
        List<T> trees = new ArrayList<>(groups.size());
        for (List<W> group : groups) {
            trees.add(tree.apply(group.get(0)));
        }
        return trees;
    }
}
