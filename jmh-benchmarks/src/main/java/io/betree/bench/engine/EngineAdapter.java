package io.betree.bench.engine;

import io.betree.Codec;
import java.nio.file.Path;

/**
 * The one interface every engine in the benchmark suite is driven through, so that each workload
 * runs the same byte-for-byte operations against betree, RocksDB and LMDB.
 *
 * <p>Life cycle: {@link #open} (creates the store when absent), any number of {@link #table}
 * lookups and operations, {@link #close}; {@link #open} may be called again after
 * {@link #close}, which is how cold reads reopen a store with an empty cache.
 *
 * <p>Writes made through the tables form a batch that {@link #commit()} ends: one transaction of
 * the engine (a betree {@code Transaction}, a RocksDB {@code WriteBatch}, an LMDB write
 * transaction). Reads see committed data; workloads never read in the middle of a batch.
 *
 * <p>Threads: each thread has a batch of its own, so several threads may put, delete and
 * {@link #commit()} at once through the same tables (the time-series workload); LMDB runs their
 * batches one at a time, since it has a single writer. Everything else ({@link #open},
 * {@link #table}, reads, {@link #flush()}, {@link #close}) belongs to one thread while no other
 * thread writes, and {@link #flush()} and {@link #close} commit only that thread's batch.
 */
public interface EngineAdapter extends AutoCloseable {

    /** Short lower-case engine name used in parameters, file names and reports. */
    String name();

    /** Whether the engine can compress its blocks with {@code codec}. */
    boolean supports(Codec codec);

    /**
     * Opens (creating when absent) the store in {@code dir}.
     *
     * @throws IllegalArgumentException if the codec is not {@link #supports supported}
     * @throws IllegalStateException if already open
     */
    void open(Path dir, EngineSettings settings);

    /** The named table (an index, column family or sub-database), created when absent. */
    Table table(String name);

    /**
     * Ends the calling thread's current batch of writes; with {@link EngineSettings#sync()} it is
     * durable on return.
     */
    void commit();

    /** Commits, then makes everything written so far durable in the store's files. */
    void flush();

    /** Bytes of the store's files in its directory now (diagnostic text logs excluded). */
    long diskBytes();

    /** Flushes and releases everything; idempotent. */
    @Override
    void close();

    /**
     * Nanoseconds the engine has held committed writers back since {@link #open} because its
     * background work fell behind (betree's back-pressure), or -1 if the engine does not say.
     */
    default long writerWaitNanos() {
        return -1;
    }

    /**
     * The engine's messages beyond put and delete (blind counter increments and field writes, and
     * read-modify-write batches), or null when it has none: then the update benchmark skips it.
     * What it has can be asked of a closed adapter too; its writes and reads need it open.
     */
    default Updates updates() {
        return null;
    }

    /** One ordered key-value table; keys compare as unsigned byte strings in every engine. */
    interface Table {
        /** Stores {@code value} under {@code key} in the calling thread's current batch. */
        void put(byte[] key, byte[] value);

        /** The committed value of {@code key}, or null. */
        byte[] get(byte[] key);

        /**
         * Removes {@code key} in the calling thread's current batch (a blind delete: absent keys are
         * no error).
         */
        void delete(byte[] key);

        /**
         * Visits up to {@code limit} entries with {@code from <= key < to} in key order; a null bound
         * is open. Every engine hands fresh key and value arrays to the sink.
         *
         * @return the number of entries visited
         */
        long scan(byte[] from, byte[] to, long limit, ScanSink sink);
    }

    /** Receives the entries of a scan. */
    @FunctionalInterface
    interface ScanSink {
        /** One entry. */
        void accept(byte[] key, byte[] value);
    }

    /** The adapter of the engine called {@code name}: betree, rocksdb or lmdb. */
    static EngineAdapter create(String name) {
        switch (name) {
            case BetreeAdapter.NAME:
                return new BetreeAdapter();
            case RocksDbAdapter.NAME:
                return new RocksDbAdapter();
            case LmdbAdapter.NAME:
                return new LmdbAdapter();
            default:
                throw new IllegalArgumentException("unknown engine '" + name + "'; known: betree, rocksdb, lmdb");
        }
    }
}
