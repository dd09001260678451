package io.betree.internal.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * A {@link FileHandle} that passes every call to another one; test wrappers extend it and override
 * only the calls they observe or change (as {@link ForwardingStorageEnv} does for the file layer).
 */
public abstract class ForwardingFileHandle implements FileHandle {
    /** The wrapped handle. */
    protected final FileHandle delegate;

    protected ForwardingFileHandle(FileHandle delegate) {
        this.delegate = delegate;
    }

    @Override
    public Path path() {
        return delegate.path();
    }

    @Override
    public void readFully(ByteBuffer dst, long position) throws IOException {
        delegate.readFully(dst, position);
    }

    @Override
    public void write(ByteBuffer src, long position) throws IOException {
        delegate.write(src, position);
    }

    @Override
    public void sync() throws IOException {
        delegate.sync();
    }

    @Override
    public long size() throws IOException {
        return delegate.size();
    }

    @Override
    public void truncate(long size) throws IOException {
        delegate.truncate(size);
    }

    @Override
    public void close() throws IOException {
        delegate.close();
    }
}
