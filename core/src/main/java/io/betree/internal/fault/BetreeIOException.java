package io.betree.internal.fault;

import java.io.IOException;

/** An I/O operation on the engine's files failed; the cause is the {@link IOException}. */
public class BetreeIOException extends BetreeException {
    private static final long serialVersionUID = 1L;

    private final String operation;

    /** Wraps {@code cause}; {@code operation} names what failed and the file. */
    public BetreeIOException(String operation, IOException cause) {
        super(operation + ": " + cause, cause);
        this.operation = operation;
    }

    /** What failed, without the cause. */
    public String operation() {
        return operation;
    }

    /** The underlying I/O failure. */
    public IOException ioCause() {
        return (IOException) getCause();
    }
}
