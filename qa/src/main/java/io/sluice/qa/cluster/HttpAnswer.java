package io.sluice.qa.cluster;

import tools.jackson.databind.JsonNode;

import java.time.Duration;

/** One HTTP answer of the gateway, with how long it took. */
public record HttpAnswer(int status, String body, Duration elapsed)
{
    /** The body as JSON; fails with the body in the message when it is not JSON. */
    public JsonNode json()
    {
        return Json.parse(body);
    }

    @Override
    public String toString()
    {
        return status + " after " + elapsed.toMillis() + " ms: " + body;
    }
}
