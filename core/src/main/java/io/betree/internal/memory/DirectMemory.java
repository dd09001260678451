package io.betree.internal.memory;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;

/**
 * Regions for {@link SegmentPool} from the JVM's direct buffers, for JDKs before 22: counted
 * against {@code -XX:MaxDirectMemorySize} like any direct buffer, and freed the moment the pool lets
 * them go through the buffer's cleaner ({@code sun.misc.Unsafe.invokeCleaner}, in the
 * {@code jdk.unsupported} module every JDK has), not when a collection finds them. On JDK 24 and
 * later that call prints a deprecation warning, so {@link NodeMemory} initializes this class only
 * when direct buffers may be used (arenas are the default from JDK 22): its probe alone made
 * every process print it.
 *
 * <p>Thread-safe.
 */
final class DirectMemory implements SegmentPool.Source {
    private static final MethodHandle INVOKE_CLEANER = invokeCleaner();

    private static MethodHandle invokeCleaner() {
        try {
            Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
            Field theUnsafe = unsafeClass.getDeclaredField("theUnsafe");
            theUnsafe.setAccessible(true);
            MethodHandle handle = MethodHandles.publicLookup()
                    .findVirtual(unsafeClass, "invokeCleaner", MethodType.methodType(void.class, ByteBuffer.class))
                    .bindTo(theUnsafe.get(null));
            // Tried once: a JVM may refuse it at the call (a future one, or one told to deny Unsafe).
            handle.invokeExact(ByteBuffer.allocateDirect(1));
            return handle;
        } catch (Throwable e) {
            return null; // no way to free a direct buffer at once: Netty's pool is used instead
        }
    }

    /** Whether direct buffers can be freed at once on this JVM. */
    static boolean available() {
        return INVOKE_CLEANER != null;
    }

    @Override
    public SegmentPool.Region allocate(int bytes) {
        ByteBuffer buffer = ByteBuffer.allocateDirect(bytes);
        return new SegmentPool.Region(buffer, buffer);
    }

    @Override
    public void free(SegmentPool.Region region) {
        try {
            INVOKE_CLEANER.invokeExact((ByteBuffer) region.handle());
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("freeing a direct buffer: " + t, t);
        }
    }
}
