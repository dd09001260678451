package io.betree.compression;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdException;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Zstandard frames (with content size, without content checksum) through zstd-jni. Levels 1 to
 * {@link Zstd#maxCompressionLevel()} and the negative fast levels down to
 * {@link Zstd#minCompressionLevel()} are accepted; level 0 is rejected because zstd treats it as
 * "default" and {@link #level()} would then be ambiguous. Direct buffers on both sides use
 * zstd-jni's direct-buffer API; any other combination goes through byte arrays.
 */
public final class ZstdCompressor extends AbstractBlockCompressor {

    /** On-disk identifier of zstd blocks. */
    public static final int ID = 2;

    /** Registry name of this codec. */
    public static final String NAME = "zstd";

    /** Default level. */
    public static final int DEFAULT_LEVEL = 3;

    /** Creates a codec compressing at the default level. */
    public ZstdCompressor() {
        this(DEFAULT_LEVEL);
    }

    /**
     * Creates a codec compressing at {@code level}.
     *
     * @throws IllegalArgumentException if zstd-jni does not support {@code level}, or it is 0
     */
    public ZstdCompressor(int level) {
        super(checkLevel(level));
    }

    /** Returns {@code level} if valid, otherwise throws naming the valid range. */
    static int checkLevel(int level) {
        int min = Zstd.minCompressionLevel();
        int max = Zstd.maxCompressionLevel();
        if (level == 0 || level < min || level > max) {
            throw new IllegalArgumentException("invalid zstd level " + level + "; valid levels are "
                    + min + "..-1 (fast) and 1.." + max);
        }
        return level;
    }

    /** Returns {@value #ID}. */
    @Override
    public int id() {
        return ID;
    }

    /** Returns {@value #NAME}. */
    @Override
    public String name() {
        return NAME;
    }

    @Override
    long bound(int srcLength) {
        return Zstd.compressBound(srcLength);
    }

    @Override
    int compressBlock(ByteBuffer in, ByteBuffer out) {
        ZstdCompressCtx ctx = takeCompressContext();
        try {
            ctx.setLevel(level());
            if (in.isDirect() && out.isDirect()) {
                return ctx.compressDirectByteBuffer(out, out.position(), out.remaining(),
                        in, in.position(), in.remaining());
            }
            byte[] src = toArray(in);
            int srcOff = offset(in);
            if (out.hasArray()) {
                return ctx.compressByteArray(out.array(), offset(out), out.remaining(), src, srcOff, in.remaining());
            }
            byte[] tmp = new byte[(int) bound(in.remaining())];
            int written = ctx.compressByteArray(tmp, 0, tmp.length, src, srcOff, in.remaining());
            out.put(tmp, 0, written);
            return written;
        } catch (ZstdException e) {
            throw new IllegalStateException("zstd compression failed", e);
        } finally {
            giveBack(ctx, COMPRESS_CONTEXTS);
        }
    }

    @Override
    int decompressBlock(ByteBuffer in, ByteBuffer out) {
        if (!in.hasRemaining()) {
            throw malformed("empty input", null);
        }
        ZstdDecompressCtx ctx = takeDecompressContext();
        try {
            if (in.isDirect() && out.isDirect()) {
                return ctx.decompressDirectByteBuffer(out, out.position(), out.remaining(),
                        in, in.position(), in.remaining());
            }
            byte[] src = toArray(in);
            int srcOff = offset(in);
            if (out.hasArray()) {
                return ctx.decompressByteArray(out.array(), offset(out), out.remaining(), src, srcOff, in.remaining());
            }
            byte[] tmp = new byte[out.remaining()];
            int produced = ctx.decompressByteArray(tmp, 0, tmp.length, src, srcOff, in.remaining());
            out.put(tmp, 0, produced);
            return produced;
        } catch (ZstdException e) {
            throw malformed("corrupt frame: " + e.getMessage(), e);
        } finally {
            giveBack(ctx, DECOMPRESS_CONTEXTS);
        }
    }

    /*
     * Native contexts are kept in two small pools shared by the process rather than made per call:
     * a context made and freed per block left its native buffers in the C allocator's per-thread
     * arenas, about 90 MB of resident memory with a handful of writer threads that no budget saw.
     * At most twice POOLED_CONTEXTS are kept in all; extra ones made under contention are freed.
     */
    private static final int POOLED_CONTEXTS = Math.max(2, Runtime.getRuntime().availableProcessors());
    private static final ConcurrentLinkedQueue<ZstdCompressCtx> COMPRESS_CONTEXTS = new ConcurrentLinkedQueue<>();
    private static final ConcurrentLinkedQueue<ZstdDecompressCtx> DECOMPRESS_CONTEXTS = new ConcurrentLinkedQueue<>();
    private static final AtomicInteger POOLED = new AtomicInteger();

    private static ZstdCompressCtx takeCompressContext() {
        ZstdCompressCtx ctx = COMPRESS_CONTEXTS.poll();
        if (ctx == null) {
            return new ZstdCompressCtx();
        }
        POOLED.decrementAndGet();
        return ctx;
    }

    private static ZstdDecompressCtx takeDecompressContext() {
        ZstdDecompressCtx ctx = DECOMPRESS_CONTEXTS.poll();
        if (ctx == null) {
            return new ZstdDecompressCtx();
        }
        POOLED.decrementAndGet();
        return ctx;
    }

    /** Keeps {@code ctx} for the next call if the pools have room; frees it otherwise. */
    private static <C extends AutoCloseable> void giveBack(C ctx, ConcurrentLinkedQueue<C> pool) {
        if (POOLED.incrementAndGet() <= 2 * POOLED_CONTEXTS) {
            pool.offer(ctx);
            return;
        }
        POOLED.decrementAndGet();
        try {
            ctx.close();
        } catch (Exception e) {
            // Freeing a native context does not fail in practice; nothing to recover either way.
        }
    }

    /** The backing array of {@code buf}, or a copy of its remaining bytes if it has none. */
    private static byte[] toArray(ByteBuffer buf) {
        if (buf.hasArray()) {
            return buf.array();
        }
        byte[] copy = new byte[buf.remaining()];
        buf.get(buf.position(), copy);
        return copy;
    }

    /** Offset of the position of {@code buf} in the array returned by {@link #toArray}. */
    private static int offset(ByteBuffer buf) {
        return buf.hasArray() ? buf.arrayOffset() + buf.position() : 0;
    }
}
