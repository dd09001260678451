package io.betree.internal.log;

import io.betree.internal.fault.BetreeIOException;
import io.betree.internal.fault.CorruptionException;
import io.betree.internal.storage.StorageEnv;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The engine's view of its write-ahead log: appends and replays typed records and maps I/O
 * failures to {@link BetreeIOException} and malformed records to {@link CorruptionException}, both
 * naming the log directory. Thread-safe, as {@link WriteAheadLog} is.
 */
public final class DurableLog implements Closeable {
    private final WriteAheadLog wal;
    private final Path dir;

    private DurableLog(WriteAheadLog wal, Path dir) {
        this.wal = wal;
        this.dir = dir;
    }

    /** Opens (or starts) the log in {@code dir}, with segments of {@code segmentBytes}. */
    public static DurableLog open(StorageEnv storage, Path dir, long segmentBytes) throws IOException {
        return new DurableLog(WriteAheadLog.open(storage, dir, segmentBytes), dir);
    }

    /** Receives the records recovery replays, in log order. */
    public interface Replayer {
        /** An index was created. */
        void createIndex(CreateIndexRecord record);

        /** A transaction committed. */
        void commit(CommitRecord record);

        /** A large transaction committed the parts logged before; read them with {@link #partAt}. */
        void commitParts(CommitPartsRecord record);
    }

    /** Replays every record from {@code fromLsn} on; truncates a torn tail. */
    public void replay(long fromLsn, Replayer replayer) {
        try {
            wal.replay(fromLsn, (lsn, type, payload) -> {
                if (type == LogRecordType.WRITES) {
                    return; // Read through the COMMIT_PARTS record that names it, if any.
                }
                LogPayload record;
                try {
                    record = type.decode(payload);
                } catch (IllegalArgumentException e) {
                    throw new CorruptionException(dir, "log record at LSN " + lsn + " is malformed: " + e.getMessage());
                }
                if (record instanceof CommitRecord commit) {
                    replayer.commit(commit);
                } else if (record instanceof CreateIndexRecord created) {
                    replayer.createIndex(created);
                } else if (record instanceof CommitPartsRecord parts) {
                    replayer.commitParts(parts);
                }
            });
        } catch (IOException e) {
            throw new BetreeIOException("replaying the log in " + dir, e);
        }
    }

    /**
     * Appends a commit record {@link CommitRecord#encodeUnstamped} made, stamped with
     * {@code commitTs}; returns the position to pass to {@link #syncTo} for its durability.
     */
    public long appendCommit(long commitTs, ByteBuffer unstamped) {
        try {
            CommitRecord.stamp(unstamped, commitTs);
            return wal.append(LogRecordType.COMMIT, unstamped);
        } catch (IOException e) {
            throw new BetreeIOException("logging a commit in " + dir, e);
        }
    }

    /**
     * The part of a large commit logged at {@code lsn}; only while {@link #replay} runs, from its
     * {@link Replayer}.
     *
     * @throws CorruptionException if no well-formed part is there
     */
    public WritesRecord partAt(long lsn) {
        ByteBuffer payload;
        try {
            payload = wal.recordDuringReplay(lsn, LogRecordType.WRITES);
        } catch (IOException e) {
            throw new BetreeIOException("reading a large commit's part in the log in " + dir, e);
        }
        try {
            return WritesRecord.decode(payload);
        } catch (IllegalArgumentException e) {
            throw new CorruptionException(dir, "log record at LSN " + lsn + " is malformed: " + e.getMessage());
        }
    }

    /**
     * Appends one part of a large transaction's writes, before it commits; returns the part's LSN, for
     * its {@link CommitPartsRecord}.
     */
    public long appendWrites(WritesRecord part) {
        try {
            ByteBuffer payload = part.encode();
            int size = RecordFormat.size(payload.remaining());
            return wal.append(LogRecordType.WRITES, payload) - size;
        } catch (IOException e) {
            throw new BetreeIOException("logging a large transaction's writes in " + dir, e);
        }
    }

    /** Appends the commit of logged parts; returns the position to pass to {@link #syncTo}. */
    public long appendCommitParts(CommitPartsRecord record) {
        try {
            return wal.append(record);
        } catch (IOException e) {
            throw new BetreeIOException("logging a commit in " + dir, e);
        }
    }

    /** Logs the creation of an index. */
    public long appendCreateIndex(CreateIndexRecord record) {
        try {
            return wal.append(record);
        } catch (IOException ex) {
            throw new BetreeIOException("logging an index creation in " + dir, ex);
        }
    }

    /** Returns once everything up to {@code position} is on disk. */
    public void syncTo(long position) {
        try {
            wal.syncTo(position);
        } catch (IOException e) {
            throw new BetreeIOException("syncing the log in " + dir, e);
        }
    }

    /** Syncs the log in the background every {@code interval}. */
    public void startPeriodicSync(Duration interval) {
        wal.startPeriodicSync(interval);
    }

    /** The position after the last appended record. */
    public long endLsn() {
        return wal.endLsn();
    }

    /** Deletes segments that hold only records before {@code lsn}. */
    public void deleteBefore(long lsn) {
        try {
            wal.deleteSegmentsBefore(lsn);
        } catch (IOException e) {
            throw new BetreeIOException("deleting old log segments in " + dir, e);
        }
    }

    @Override
    public void close() throws IOException {
        wal.close();
    }
}
