def test_healthz_answers_ok_when_database_and_broker_are_up(client, db):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    assert response["X-Trace-Id"]
