package io.betree.internal.memory;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.ByteBuffer;

/**
 * Native memory from {@code java.lang.foreign} arenas on JDK 22 and later, where that API is final:
 * memory the JVM's direct-memory limit ({@code -XX:MaxDirectMemorySize}, by default the heap size)
 * does not count, so a cache of any size needs no JVM option. Each region is a shared arena of its
 * own, so that it is freed the moment the pool lets it go, not when a collection finds it.
 *
 * <p>The API is reached through method handles rather than from a multi-release jar: the project
 * builds on JDK 17, whose compiler does not know the final API, and a region is taken or freed
 * seldom (a pool chunk, a huge buffer), so the indirection costs nothing that shows.
 *
 * <p>Thread-safe: a region may be freed from any thread.
 */
final class ForeignMemory implements SegmentPool.Source {
    /** Alignment of every region: a cache line. */
    private static final long ALIGNMENT = 64;

    private static final MethodHandle OF_SHARED;
    private static final MethodHandle ALLOCATE;
    private static final MethodHandle AS_BYTE_BUFFER;
    private static final MethodHandle CLOSE;

    static {
        MethodHandle ofShared = null;
        MethodHandle allocate = null;
        MethodHandle asByteBuffer = null;
        MethodHandle close = null;
        if (Runtime.version().feature() >= 22) {
            try {
                Class<?> arena = Class.forName("java.lang.foreign.Arena");
                Class<?> segment = Class.forName("java.lang.foreign.MemorySegment");
                MethodHandles.Lookup lookup = MethodHandles.publicLookup();
                ofShared = lookup.findStatic(arena, "ofShared", MethodType.methodType(arena));
                allocate = lookup.findVirtual(arena, "allocate",
                        MethodType.methodType(segment, long.class, long.class));
                asByteBuffer = lookup.findVirtual(segment, "asByteBuffer", MethodType.methodType(ByteBuffer.class));
                close = lookup.findVirtual(arena, "close", MethodType.methodType(void.class));
            } catch (ReflectiveOperationException | RuntimeException e) {
                ofShared = null; // A JVM without the final API: direct buffers, as on JDK 17.
            }
        }
        OF_SHARED = ofShared;
        ALLOCATE = allocate;
        AS_BYTE_BUFFER = asByteBuffer;
        CLOSE = close;
    }

    /** Whether this JVM offers arenas (JDK 22+). */
    static boolean available() {
        return OF_SHARED != null;
    }

    @Override
    public SegmentPool.Region allocate(int bytes) {
        Object arena = invoke(OF_SHARED);
        try {
            Object segment = ALLOCATE.invoke(arena, (long) bytes, ALIGNMENT);
            return new SegmentPool.Region((ByteBuffer) AS_BYTE_BUFFER.invoke(segment), arena);
        } catch (Throwable t) {
            invoke(CLOSE, arena);
            throw rethrow(t);
        }
    }

    @Override
    public void free(SegmentPool.Region region) {
        invoke(CLOSE, region.handle());
    }

    private static Object invoke(MethodHandle handle, Object... args) {
        try {
            return handle.invokeWithArguments(args);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e; // OutOfMemoryError from the C allocator, above all.
        }
        return new IllegalStateException("native memory: " + t, t);
    }
}
