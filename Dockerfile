# The web UI for a friend to open: `docker build -t planner .` then
# `docker run -p 8501:8501 -e PLANNER_PUBLIC_URL=https://planner.example.org/ -v planner-home:/data planner`
FROM python:3.12-slim
WORKDIR /app
COPY pyproject.toml setup.py README.md ./
COPY planner ./planner
COPY data ./data
COPY ui ./ui
COPY app.py serve.py ./
RUN pip install --no-cache-dir . && useradd --create-home planner && mkdir -p /data && chown planner /data
USER planner
ENV PLANNER_HOME=/data \
    PYTHONUNBUFFERED=1
EXPOSE 8501
HEALTHCHECK CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=3)"
CMD ["streamlit", "run", "serve.py", "--server.address=0.0.0.0", "--server.port=8501", "--server.headless=true", \
     "--browser.gatherUsageStats=false"]
