package io.betree;

import java.io.IOException;

/**
 * An I/O operation on the environment's files failed (disk full, permission denied, device error).
 * The operation that threw did not take effect; data made durable before it is unaffected.
 */
public class BetreeIOException extends BetreeException {
    private static final long serialVersionUID = 1L;

    /** Wraps {@code cause}, with a message that names the operation and the file. */
    public BetreeIOException(String message, IOException cause) {
        super(message + ": " + cause, cause);
    }
}
