"""Training: cross-entropy gradients of embedding rows, optimizer updates, and the tiny live-trained model."""
