package io.betree;

import io.betree.internal.tree.MessageType;
import io.betree.internal.tree.RangeMessage;
import io.betree.internal.tree.UpdateFunctions;
import io.betree.internal.tree.UpdateList;
import io.betree.internal.txn.WriteOp;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A transaction's own range deletes and broadcasts ({@link Index#deleteRange(Transaction, byte[],
 * byte[])}, {@link Index#updateAll(Transaction, String, byte[])}), per index, in call order. They
 * apply to what the transaction's snapshot holds before its keyed writes do: the transaction folds
 * each of them into its earlier keyed writes as it records it ({@link Transaction}), and a commit
 * carries them before its keyed writes, which is the order the tree gives messages of one commit.
 *
 * <p>Not thread-safe: its transaction's.
 */
final class OwnRanges {
    private final Map<Index, List<RangeMessage>> byIndex = new LinkedHashMap<>();

    /** Records a delete of {@code [lower, upper)} ({@code lower} empty, {@code upper} null: unbounded). */
    void addDelete(Index index, byte[] lower, byte[] upper) {
        add(index, RangeMessage.of(MessageType.RANGE_DELETE, 0, 0, lower, RangeMessage.encodeValue(upper, null)));
    }

    /** Records a broadcast of the calls of {@code updateList} to every key present in the index. */
    void addBroadcast(Index index, byte[] updateList) {
        add(index, RangeMessage.of(MessageType.RANGE_UPDATE, 0, 0, new byte[0], RangeMessage.encodeValue(null, updateList)));
    }

    private void add(Index index, RangeMessage r) {
        byIndex.computeIfAbsent(index, i -> new ArrayList<>(2)).add(r);
    }

    /** Whether there are none at all. */
    boolean isEmpty() {
        return byIndex.isEmpty();
    }

    /** Whether there are some on {@code index}. */
    boolean any(Index index) {
        return byIndex.containsKey(index);
    }

    /** The indexes with some, in first-use order. */
    Iterable<Index> indexes() {
        return byIndex.keySet();
    }

    /**
     * The value of {@code key} of {@code index} after these change {@code committed} (null:
     * absent); null when absent. A broadcast leaves an absent key absent.
     */
    byte[] over(Index index, byte[] key, byte[] committed, UpdateFunctions functions) {
        List<RangeMessage> ranges = byIndex.get(index);
        if (ranges == null) {
            return committed;
        }
        byte[] value = committed;
        for (RangeMessage r : ranges) {
            if (r.covers(key)) {
                value = r.updates() == null ? null : UpdateList.applyWhilePresent(functions, key, value, r.updates());
            }
        }
        return value;
    }

    /**
     * The writes that commit these for {@code index}: each range delete, and the broadcasts as one,
     * their calls in order (a range delete and a broadcast commute: a broadcast creates no key, and
     * the tree allows one broadcast per key and commit).
     *
     * @throws IllegalArgumentException if the broadcasts hold more than 65,535 calls together
     */
    List<WriteOp> ops(Index index) {
        List<WriteOp> ops = new ArrayList<>();
        byte[] calls = null;
        for (RangeMessage r : byIndex.getOrDefault(index, List.of())) {
            if (r.updates() == null) {
                ops.add(WriteOp.rangeDelete(index.id(), index.tree(), r.lower(), r.upper()));
            } else {
                calls = calls == null ? r.updates() : UpdateList.concat(calls, r.updates());
            }
        }
        if (calls != null) {
            ops.add(WriteOp.broadcast(index.id(), index.tree(), calls));
        }
        return ops;
    }

    void clear() {
        byIndex.clear();
    }
}
