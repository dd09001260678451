package io.betree.bench.engine;

import io.betree.bench.engine.EngineAdapter.Table;

/**
 * What an engine offers beyond put and delete (issue 11), for the update benchmark: a counter
 * increment and a field write that do not read the value, a read-modify-write batch under the
 * engine's own isolation, and two messages that cover many keys at once: a broadcast update of
 * every row and a range delete. An {@link EngineAdapter} that has them returns one from
 * {@link EngineAdapter#updates()}; LMDB has neither a merge nor an update function and returns
 * null, and the update benchmark skips it.
 *
 * <p>Each kind of message the benchmark measures is one method here, expressed in each engine's
 * own terms: betree calls {@code Index.update} with a function the adapter registers when it opens
 * the environment, RocksDB writes a merge operand for its built-in {@code uint64add} operator.
 * Writes go into the calling thread's batch, as {@link Table#put} does, and {@link EngineAdapter#commit()}
 * ends it.
 */
public interface Updates {
    /** Bytes of a counter's value, in either engine's encoding. */
    int COUNTER_BYTES = 8;

    /** What the blind counter increment is called in this engine: {@code update} or {@code merge}. */
    String blindAddName();

    /** The stored value of a counter holding {@code n}, in this engine's encoding. */
    byte[] encodeCounter(long n);

    /** The count a stored counter value holds; 0 for null (absent). */
    long decodeCounter(byte[] value);

    /** Adds {@code delta} to the counter under {@code key} without reading it, in the calling thread's batch. */
    void addToCounter(Table table, byte[] key, long delta);

    /** Whether {@link #setField} exists here (betree's update function; RocksDB has no such operator). */
    boolean hasBlindFieldWrite();

    /**
     * Overwrites {@code field.length} bytes of the value under {@code key} at {@code offset} without
     * reading it, in the calling thread's batch; an absent key stays absent.
     *
     * @throws UnsupportedOperationException if {@link #hasBlindFieldWrite()} is false
     */
    void setField(Table table, byte[] key, int offset, byte[] field);

    /**
     * Whether {@link #inBatch} isolates its reads and writes from other threads' (a betree
     * transaction: snapshot isolation, retried on a write conflict). Without it (RocksDB without
     * its transaction layer) two threads' read-modify-writes of one key may lose one of them, so
     * only workloads indifferent to that (setting a field) use it.
     */
    boolean isolatedReadModifyWrite();

    /**
     * Runs {@code body}, which reads with {@link #readInBatch} and writes through the tables, as one
     * batch of the calling thread, and commits it. When the engine reports a write conflict (at a
     * write or at the commit) the batch is discarded and {@code body} runs again from the start, so
     * it must choose its keys before the call. The calling thread's batch must hold no writes when
     * it is called.
     *
     * @return how many times the batch was discarded and run again
     */
    int inBatch(Runnable body);

    /** The value of {@code key} as the calling thread's batch sees it (in betree, its own writes too). */
    byte[] readInBatch(Table table, byte[] key);

    /** Whether {@link #appendToAll} exists here (betree's broadcast update; RocksDB has none). */
    boolean hasBroadcast();

    /**
     * Appends {@code suffix} to the value of every row of {@code table} in one call whose cost does
     * not depend on the row count (betree's {@code Index.updateAll}): committed on return, outside
     * the calling thread's batch, which is committed first (the workloads call it with none).
     *
     * @throws UnsupportedOperationException if {@link #hasBroadcast()} is false
     */
    void appendToAll(Table table, byte[] suffix);

    /**
     * Removes every key {@code k} of {@code table} with {@code fromInclusive <= k < toExclusive} in
     * one call (betree's {@code Index.deleteRange}, RocksDB's {@code deleteRange}): committed on
     * return, with the durability of a commit, outside the calling thread's batch, which is
     * committed first (the workloads call it with none). A null {@code fromInclusive} starts at the
     * first key; {@code toExclusive} must be given (RocksDB's range has no open end).
     */
    void deleteRange(Table table, byte[] fromInclusive, byte[] toExclusive);
}
