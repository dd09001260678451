package io.betree;

import java.io.IOException;

/**
 * An I/O operation on the environment's files failed (disk full, permission denied, device error).
 * Data made durable before it is unaffected. A commit whose log sync failed may or may not
 * survive (see {@link Transaction#commit()}); after such a failure the environment refuses
 * further work until it is closed and reopened, which recovers a consistent committed state.
 */
public class BetreeIOException extends BetreeException {
    private static final long serialVersionUID = 1L;

    /** Wraps {@code cause}, with a message that names the operation and the file. */
    public BetreeIOException(String message, IOException cause) {
        super(message + ": " + cause, cause);
    }
}
