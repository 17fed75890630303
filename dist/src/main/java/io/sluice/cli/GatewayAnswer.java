package io.sluice.cli;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.MissingNode;

/**
 * One HTTP answer of the gateway's management API: its status, its raw body (printed as is by
 * {@code --output json}) and the body as a JSON tree (a missing node when the body is not JSON).
 */
public record GatewayAnswer(String method, String path, int status, String body, JsonNode json)
{
    static GatewayAnswer parse(
        final JsonMapper mapper, final String method, final String path, final int status, final String body)
    {
        JsonNode json = MissingNode.getInstance();
        if (body != null && !body.isBlank())
        {
            try
            {
                json = mapper.readTree(body);
            }
            catch (final JacksonException ex)
            {
                json = MissingNode.getInstance();
            }
        }
        return new GatewayAnswer(method, path, status, body == null ? "" : body, json);
    }

    public boolean isSuccess()
    {
        return status >= 200 && status < 300;
    }

    public int exitCode()
    {
        return ExitCode.ofHttpStatus(status);
    }

    /**
     * The one line explaining an error answer: the contract's {@code {"error", "message"}} when present,
     * else the raw body cut short.
     */
    public String errorText()
    {
        final String message = json.path("message").asString("");
        final String error = json.path("error").asString("");
        if (!message.isEmpty() && !error.isEmpty())
        {
            return error + ": " + message;
        }
        if (!message.isEmpty())
        {
            return message;
        }
        if (!error.isEmpty())
        {
            return error;
        }
        final String text = body.strip().replace('\n', ' ');
        return text.isEmpty() ? "(no body)" : text.length() > 200 ? text.substring(0, 200) + "..." : text;
    }

    /** What an operator should do next about an error status; empty when nothing useful can be said. */
    public String advice()
    {
        switch (status)
        {
            case 401:
                return "pass the management token with --token or SLUICE_TOKEN";
            case 404:
                return "check the id (or that the gateway exposes /actuator" + path + ")";
            case 409:
                return "wait for the running operation to end, or cancel it";
            case 400:
                return "fix the arguments";
            case 503:
                return path.startsWith("/exporting/")
                    ? "retry the failed pairs with --retries N once their brokers are back"
                    : "check 'admin partitions' for unreachable brokers or partitions without a leader, then retry";
            case 504:
                return path.startsWith("/exporting/")
                    ? "retry the timed-out pairs with --retries N"
                    : "the brokers did not answer in time; retry";
            default:
                return "";
        }
    }
}
