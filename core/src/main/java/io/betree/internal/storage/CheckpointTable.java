package io.betree.internal.storage;

/**
 * The translation table of a checkpoint in progress. It starts as a copy of the current table when
 * the checkpoint begins; {@link BlockFile#writeForCheckpoint} then moves entries to the images it
 * writes, so that the checkpoint persists every block as it was at the begin, however the current
 * table changed meanwhile. Its set of allocated numbers never changes. Once the checkpoint starts
 * finishing the table is frozen and {@link #table()} is written out (and becomes the durable table).
 *
 * <p>Not thread-safe; {@link TableSet} guards it with its lock. The arrays are shared with
 * {@link #table()} and only change while the table is not frozen, that is before the finishing
 * thread reads them.
 */
final class CheckpointTable {

    private final TableSnapshot table;
    /** Set when finishing started: no entry changes any more. */
    private boolean frozen;

    /** A checkpoint table holding the entries of {@code begin}, which it takes ownership of. */
    CheckpointTable(TableSnapshot begin) {
        this.table = begin;
    }

    /** The table; its entries change until the table is frozen. */
    TableSnapshot table() {
        return table;
    }

    /** Offset of {@code blockNumber} in this table; {@link TranslationTable#FREE} when not allocated in it. */
    long offset(long blockNumber) {
        return table.offset(blockNumber);
    }

    /** On-disk length of {@code blockNumber} in this table, 0 when not written. */
    int length(long blockNumber) {
        return table.length(blockNumber);
    }

    /** Whether {@code blockNumber} is allocated in this table. */
    boolean contains(long blockNumber) {
        return table.offset(blockNumber) != TranslationTable.FREE;
    }

    /** Points the allocated {@code blockNumber} at a new image. */
    void set(long blockNumber, long offset, int length) {
        if (frozen) {
            throw new IllegalStateException("checkpoint table is frozen");
        }
        if (!contains(blockNumber)) {
            throw new IllegalArgumentException("block " + blockNumber + " is not in the checkpoint's table");
        }
        table.offsets()[(int) blockNumber] = offset;
        table.lengths()[(int) blockNumber] = length;
    }

    /** Whether finishing started. */
    boolean frozen() {
        return frozen;
    }

    /** Freezes the entries: finishing starts. */
    void freeze() {
        frozen = true;
    }
}
