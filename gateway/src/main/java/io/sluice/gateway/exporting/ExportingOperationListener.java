package io.sluice.gateway.exporting;


/** Told of every finished pause, soft pause or resume fan-out, with how long it took over all its pairs. */
@FunctionalInterface
public interface ExportingOperationListener
{
    ExportingOperationListener NONE = (result, elapsedNanos) ->
    {
    };

    /** Called once per operation on the thread that completed it; must not block. */
    void operationCompleted(ExportingOperationResult result, long elapsedNanos);
}
