package io.sluice.exporter.opensearch;

/** How the sink answered for one document of a bulk request. */
enum ItemOutcome
{
    /** Indexed (created or overwritten). */
    SUCCEEDED,
    /** The sink could not take it now (429 too many requests, 5xx): send it again. */
    RETRIABLE,
    /** The sink refuses this document as it is (another 4xx, e.g. a mapping conflict): sending it again fails again. */
    REJECTED;

    static ItemOutcome of(final int status)
    {
        if (status >= 200 && status < 300)
        {
            return SUCCEEDED;
        }
        if (status == 429 || status >= 500 || status < 200)
        {
            return RETRIABLE;
        }
        if (status == 408)
        {
            return RETRIABLE; // a timeout is not the document's fault
        }
        return REJECTED;
    }
}
