package io.betree.internal.env;

import io.betree.BetreeIOException;
import io.betree.CorruptionException;
import io.betree.internal.log.CommitRecord;
import io.betree.internal.log.CreateIndexRecord;
import io.betree.internal.log.LogRecordType;
import io.betree.internal.log.WriteAheadLog;
import io.betree.internal.storage.StorageEnv;
import io.betree.internal.txn.CommitLog;
import io.betree.internal.txn.WriteOp;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The environment's view of its write-ahead log: turns commits and index creations into log
 * records and back, and maps I/O failures to {@link BetreeIOException}.
 */
public final class DurableLog implements CommitLog, Closeable {
    private final WriteAheadLog wal;
    private final Path dir;

    private DurableLog(WriteAheadLog wal, Path dir) {
        this.wal = wal;
        this.dir = dir;
    }

    /** Opens (or starts) the log in {@code dir}. */
    public static DurableLog open(StorageEnv storage, Path dir, long segmentBytes) throws IOException {
        return new DurableLog(WriteAheadLog.open(storage, dir, segmentBytes), dir);
    }

    /** One logged write, as recovery sees it. */
    public record LoggedWrite(int indexId, byte type, byte[] key, byte[] value) {
    }

    /** Receives the records recovery replays. */
    public interface Replayer {
        /** An index was created. */
        void createIndex(Catalog.Entry entry);

        /** A transaction committed at {@code ts}. */
        void commit(long ts, List<LoggedWrite> writes);
    }

    /** Replays every record from {@code fromLsn} on; truncates a torn tail. */
    public void replay(long fromLsn, Replayer replayer) {
        try {
            wal.replay(fromLsn, (lsn, type, payload) -> {
                try {
                    switch (type) {
                        case COMMIT: {
                            CommitRecord r = CommitRecord.decode(payload);
                            List<LoggedWrite> writes = new ArrayList<>(r.ops().size());
                            for (CommitRecord.Op op : r.ops()) {
                                writes.add(new LoggedWrite(op.indexId(), op.type(), op.key(), op.value()));
                            }
                            replayer.commit(r.commitTs(), writes);
                            break;
                        }
                        case CREATE_INDEX: {
                            CreateIndexRecord r = CreateIndexRecord.decode(payload);
                            replayer.createIndex(new Catalog.Entry(r.indexId(), r.name(), 0, r.codec(), r.level(),
                                    r.nodeSize(), r.basementSize(), r.fanout()));
                            break;
                        }
                        default:
                            break;
                    }
                } catch (IllegalArgumentException e) {
                    throw new CorruptionException(dir, "log record at LSN " + lsn + " is malformed: " + e.getMessage());
                }
            });
        } catch (IOException e) {
            throw new BetreeIOException("replaying the log in " + dir, e);
        }
    }

    @Override
    public long appendCommit(long commitTs, List<WriteOp> ops) {
        List<CommitRecord.Op> logged = new ArrayList<>(ops.size());
        for (WriteOp op : ops) {
            logged.add(new CommitRecord.Op(op.indexId(), op.type(), op.key(), op.value()));
        }
        try {
            return wal.append(LogRecordType.COMMIT, new CommitRecord(commitTs, logged).encode());
        } catch (IOException e) {
            throw new BetreeIOException("logging a commit in " + dir, e);
        }
    }

    /** Logs the creation of an index. */
    public long appendCreateIndex(Catalog.Entry e) {
        try {
            return wal.append(LogRecordType.CREATE_INDEX, new CreateIndexRecord(e.id(), e.name(), e.codec(), e.level(),
                    e.nodeSize(), e.basementSize(), e.fanout()).encode());
        } catch (IOException ex) {
            throw new BetreeIOException("logging an index creation in " + dir, ex);
        }
    }

    @Override
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
