package io.betree.internal.log;

import io.betree.internal.storage.FileHandle;
import io.betree.internal.storage.ForwardingFileHandle;
import io.betree.internal.storage.ForwardingStorageEnv;
import io.betree.internal.storage.StorageEnv;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link StorageEnv} wrapper for log tests that counts file syncs without serializing anything
 * (unlike {@code FaultInjectingStorageEnv}, which holds one lock across every call). A sync can be
 * made slower, to imitate a disk, or skipped, to make crash tests fast when a fault-injecting env on
 * top of it simulates durability anyway.
 */
final class CountingStorageEnv extends ForwardingStorageEnv {

    private final long syncDelayMicros;
    private final boolean realSync;
    private final AtomicLong syncs = new AtomicLong();

    /**
     * @param syncDelayMicros extra time every sync takes
     * @param realSync whether syncs reach the file system
     */
    CountingStorageEnv(StorageEnv delegate, long syncDelayMicros, boolean realSync) {
        super(delegate);
        this.syncDelayMicros = syncDelayMicros;
        this.realSync = realSync;
    }

    /** An env over the real file system whose syncs do nothing (for crash simulation on top). */
    static CountingStorageEnv withoutSyncs() {
        return new CountingStorageEnv(StorageEnv.defaultEnv(), 0, false);
    }

    /** File syncs so far. */
    long syncCount() {
        return syncs.get();
    }

    @Override
    public FileHandle open(Path path) throws IOException {
        FileHandle file = delegate.open(path);
        return new ForwardingFileHandle(file) {
            @Override
            public void sync() throws IOException {
                syncs.incrementAndGet();
                if (syncDelayMicros > 0) {
                    try {
                        Thread.sleep(syncDelayMicros / 1000, (int) (syncDelayMicros % 1000) * 1000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IOException("interrupted", e);
                    }
                }
                if (realSync) {
                    super.sync();
                }
            }
        };
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        if (realSync) {
            delegate.syncDirectory(dir);
        }
    }

    @Override
    public Closeable lock(Path lockFile) throws IOException {
        return delegate.lock(lockFile);
    }
}
